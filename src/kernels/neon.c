/* placeholder: written by the kernels work (issue 3) */
typedef int pt_placeholder_unit;
