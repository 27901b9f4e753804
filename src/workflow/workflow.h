/*
 * The workflow layer: what a practitioner does around train and predict (decision values to
 * a file, class weights from a specification, cross-validation), over the public API of the
 * layers below. The top layer of the library: nothing below calls into it.
 */
#ifndef PT_WORKFLOW_H
#define PT_WORKFLOW_H

#include "common/common.h"
#include "ptron.h"

#endif
