"""scikit-learn's own estimator checks on every ptron estimator, with default parameters."""
from sklearn.utils.estimator_checks import parametrize_with_checks

import ptron

ESTIMATORS = [ptron.Perceptron(), ptron.BatchClassifier(), ptron.KernelPerceptron(),
              ptron.PolynomialExpansion(), ptron.RandomFourierFeatures()]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_check(estimator, check):
    check(estimator)
