/* ptron train --resume: the options of the command line that contradict the run it
 * continues. A resumed run is the saved run's, so an option given explicitly that sets one of
 * its parameters to another value is refused, naming the option and the saved value; the same
 * value is fine. Options that may change on resume are not listed here: --epochs (the run
 * goes on to it), --threads, --isa, --pass, --mem-mb, --cache-mb, --checkpoint and the other
 * options of the call itself, and those the model does not keep (--mix, --shuffle-chunk,
 * --class-weight), which are given again. */
#include <string.h>

#include "train.h"

void train_given_note(train_given *g, const char *opt, const char *value)
{
    if (g->n < TRAIN_GIVEN_MAX) g->at[g->n++] = (train_option_given){opt, value};
}

/* Each run parameter's options, and the keys of pt_train_params_get they set. */
static const struct {
    const char *opt, *keys[3];
} run_options[] = {
    {"--path", {"path"}},
    {"--eta", {"eta"}},
    {"--margin", {"margin"}},
    {"--averaged", {"variant"}},
    {"--voted", {"variant"}},
    {"--shuffle", {"shuffle"}},
    {"--multiclass", {"multiclass"}},
    {"--seed", {"seed"}},
    {"--no-bias", {"bias"}},
    {"--loss", {"loss"}},
    {"--lambda", {"lambda"}},
    {"--batch-size", {"batch_size"}},
    {"--schedule", {"schedule"}},
    {"--tol", {"tol"}},
    {"--batch-impl", {"batch_impl"}},
    {"--average-iterates", {"average_iterates"}},
    {"--last-iterate", {"average_iterates"}},
    {"--kernel", {"kernel"}},
    {"--degree", {"degree"}},
    {"--gamma", {"gamma"}},
    {"--coef0", {"coef0"}},
    {"--gram", {"gram_storage"}},
    {"--budget", {"budget"}},
    {"--voted-max-vectors", {"voted_max_vectors"}},
    {"--expand", {"expand.kind", "expand.degree", "expand.rff_dim"}},
    {"--hash-bits", {"expand.hash_bits"}},
};

/* An expression's text without its blanks (the model keeps it canonical, without spaces). */
static void squeeze(const char *s, char *out, size_t cap)
{
    size_t n = 0;
    for (; *s && n + 1 < cap; s++)
        if (*s != ' ' && *s != '\t') out[n++] = *s;
    out[n] = '\0';
}

/* Whether the key differs between the asked and the saved parameters; *saved_text gets the
 * saved value as the message shows it. */
static bool key_differs(const char *key, const pt_train_params *asked,
                        const pt_train_params *saved, char *saved_text, size_t cap)
{
    char a[300], s[300];
    if (pt_train_params_get(asked, key, a, sizeof a) != PT_OK ||
        pt_train_params_get(saved, key, s, sizeof s) != PT_OK)
        return false;
    snprintf(saved_text, cap, "%s %s", key, s);
    /* a gamma rule resolves on the data the run resumes on, which is the saved run's: the
     * number the saved run recorded */
    if (strcmp(key, "gamma") == 0 && (strcmp(a, "scale") == 0 || strcmp(a, "auto") == 0))
        return false;
    if (strcmp(key, "kernel") == 0 && asked->kernel.kind == PT_KERNEL_EXPR &&
        saved->kernel.kind == PT_KERNEL_EXPR) {
        char ea[sizeof asked->kernel.expr], es[sizeof saved->kernel.expr];
        squeeze(asked->kernel.expr, ea, sizeof ea);
        squeeze(saved->kernel.expr, es, sizeof es);
        snprintf(saved_text, cap, "kernel %s", es);
        return strcmp(ea, es) != 0;
    }
    return strcmp(a, s) != 0;
}

/* Whether opt sets a run parameter to another value than the saved one (*saved_text: that
 * value, as the message shows it). */
static bool option_differs(const char *opt, const pt_train_params *asked,
                           const pt_train_params *saved, char *saved_text, size_t cap)
{
    if (strcmp(opt, "--scale") == 0) {
        snprintf(saved_text, cap, "scale %s", pt_scale_kind_name(saved->scale));
        return asked->scale != saved->scale;
    }
    for (size_t i = 0; i < sizeof run_options / sizeof run_options[0]; i++) {
        if (strcmp(run_options[i].opt, opt) != 0) continue;
        for (int k = 0; k < 3 && run_options[i].keys[k]; k++)
            if (key_differs(run_options[i].keys[k], asked, saved, saved_text, cap)) return true;
        return false;
    }
    return false;
}

int train_resume_agrees(const train_given *g, const pt_train_params *asked,
                        const pt_train_params *saved, const char *resume)
{
    for (int i = 0; i < g->n; i++) {
        char was[400];
        const train_option_given *o = &g->at[i];
        if (!option_differs(o->opt, asked, saved, was, sizeof was)) continue;
        return cli_usage_error("train", "%s%s%s: the run to resume was trained with %s (%s): "
                               "leave the option out, or give that value", o->opt,
                               o->value ? " " : "", o->value ? o->value : "", was, resume);
    }
    return EXIT_OK;
}
