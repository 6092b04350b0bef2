"""The two small models routing learns, fitted by Newton's method with a ridge penalty.

- A choice model (a conditional logit): each case offers its cards and "new" as alternatives,
  each alternative has a feature vector, and the chance of an alternative is the softmax of
  their linear utilities. Per-case constants cancel in the softmax, so features need not be
  comparable across cases, only across the cards of one case.
- A binary logistic regression, for "does this request open new work".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np
from numpy.typing import NDArray

Matrix = NDArray[np.float64]
NEWTON_STEPS = 50
TOLERANCE = 1e-8


@dataclass(frozen=True)
class Choice:
    """One decision to learn from: the alternatives' features (a row each) and the chosen row."""

    alternatives: Matrix
    chosen: int


def softmax(utilities: Matrix) -> Matrix:
    shifted = np.exp(utilities - utilities.max())
    return shifted / shifted.sum()


def fit_choice(choices: Sequence[Choice], ridge: Matrix) -> Matrix:
    """Weights maximising the log-likelihood of the chosen alternatives, less `ridge`-weighted
    squares (one penalty per weight; 0 leaves a weight free)."""
    weights = np.zeros(len(ridge))
    for _ in range(NEWTON_STEPS):
        gradient = -ridge * weights
        hessian = -np.diag(ridge)
        for choice in choices:
            z = choice.alternatives
            p = softmax(z @ weights)
            mean = p @ z
            gradient += z[choice.chosen] - mean
            hessian -= (z.T * p) @ z - np.outer(mean, mean)
        step = np.linalg.solve(hessian, gradient)
        weights -= step
        if np.abs(step).max() < TOLERANCE:
            break
    return weights


def fit_logistic(features: Matrix, labels: NDArray[np.bool_], ridge: float) -> Matrix:
    """Weights of a logistic regression whose last feature column is the constant 1 (left
    unpenalised)."""
    penalty = np.full(features.shape[1], ridge)
    penalty[-1] = 0.0
    weights = np.zeros(features.shape[1])
    target = labels.astype(np.float64)
    for _ in range(NEWTON_STEPS):
        p = sigmoid(features @ weights)
        gradient = features.T @ (target - p) - penalty * weights
        hessian = (features.T * (p * (1 - p))) @ features + np.diag(penalty)
        step = np.linalg.solve(hessian, gradient)
        weights += step
        if np.abs(step).max() < TOLERANCE:
            break
    return weights


@overload
def sigmoid(x: float) -> float: ...
@overload
def sigmoid(x: Matrix) -> Matrix: ...
def sigmoid(x: float | Matrix) -> float | Matrix:
    return 1.0 / (1.0 + np.exp(-np.clip(x, -50, 50)))
