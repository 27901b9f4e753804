"""Model files shared with the CLI: save a fitted estimator, load any ptron model."""
import numpy as np

from ._model import Model


def save_model(estimator, path):
    """Write a fitted ptron estimator's model to path in the CLI's model format (atomically,
    with a checksum): `ptron predict path DATA` then predicts as the estimator does."""
    estimator._fitted_model().save(path)


def _float(params, key):
    """A float32 parameter as the shortest decimal that rounds to it (0.3, not 0.300000012)."""
    return float(str(np.float32(params[key])))


def load_model(path):
    """Read a model file written by the CLI (`ptron train -o`) or by save_model, as a fitted
    estimator: Perceptron, BatchClassifier or KernelPerceptron by the model's path, with the
    parameters it was trained with (probability=True where the model has Platt's sigmoid;
    class weights are not kept in model files, so class_weight is None). Its classes_ are the
    model's labels: float64 values, or str for text labels."""
    from .kernel import KernelPerceptron
    from .linear import BatchClassifier, Perceptron

    model = Model.load(path)
    p = model.params()
    common = dict(max_iter=int(p["epochs"]), shuffle=p["shuffle"] == "1",
                  random_state=int(p["seed"]), fit_intercept=p["bias"] == "1")
    if p["path"] == "online":
        est = Perceptron(eta0=_float(p, "eta"), margin=_float(p, "margin"),
                         average=p["variant"] == "averaged", voted=p["variant"] == "voted",
                         multi_class=p["multiclass"], **common)
    elif p["path"] == "batch":
        est = BatchClassifier(loss=p["loss"], alpha=_float(p, "lambda"),
                              learning_rate=p["schedule"], eta0=_float(p, "eta"),
                              batch_size=int(p["batch_size"]) or None, tol=float(p["tol"]),
                              average=p["average_iterates"] == "1", **common)
    else:
        kernel = p["kernel_expr"] if p["kernel"] == "expr" else p["kernel"]
        est = KernelPerceptron(kernel=kernel, degree=int(p["degree"]),
                               gamma=_float(p, "gamma"), coef0=_float(p, "coef0"),
                               average=p["variant"] == "averaged",
                               cache_size=int(p["cache_mb"]) or None, gram=p["gram_storage"],
                               budget=int(p["budget"]) or None,
                               **common)
    est.probability = model.platt() is not None
    est._model = model
    est.classes_ = model.classes()
    est.n_features_in_ = model.n_features
    est.n_iter_ = model.epochs_run
    return est
