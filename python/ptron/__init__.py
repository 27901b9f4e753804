"""ptron: perceptrons at the C library's speed, with scikit-learn's conventions.

    import ptron
    clf = ptron.Perceptron(max_iter=10).fit(X, y)
    clf.predict(X_test)

Estimators: Perceptron (online path), BatchClassifier (batch path), KernelPerceptron (kernel
path); transformers PolynomialExpansion and RandomFourierFeatures. Data: a float32 array in
ptron's padded layout (ptron.empty, ptron.padded, ptron.load_dataset, the transformers' output)
is used in place; anything else is copied once into that layout. Every call into libptron
releases the GIL. ptron's errors are raised as PtronError subclasses that are also ValueError,
OSError or MemoryError, with ptron's own message.
"""
from ._lib import (PtronError, PtronMemoryError, PtronOSError, PtronValueError,
                   library_path)
from ._data import empty, load_dataset, padded
from ._io import load_model, save_model
from .features import PolynomialExpansion, RandomFourierFeatures
from .kernel import KernelPerceptron
from .linear import BatchClassifier, Perceptron

__all__ = [
    "Perceptron", "BatchClassifier", "KernelPerceptron", "PolynomialExpansion",
    "RandomFourierFeatures", "load_dataset", "save_model", "load_model", "empty", "padded",
    "PtronError", "PtronValueError", "PtronOSError", "PtronMemoryError", "library_path",
]
__version__ = "0.1.0"
