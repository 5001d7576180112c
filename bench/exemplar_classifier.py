"""A linear classifier trained on the knowledge's exemplar titles, measured on held-out folds.

    TAXONOMY_DIR=... python bench/exemplar_classifier.py FILE.jsonl [FILE2.jsonl ...] \
        --taxonomy Shopify [--epochs 8] [--learning-rate 0.003] [--weights 2,4,8,16]

The index already keeps every exemplar title's sentence vector (exemplars.py),
labelled with its category: about 100,000 for Shopify, 58,000 for Google. A
softmax over the categories is fitted on them (minibatch Adam, numpy only),
then each file is scored by store folds as in fusion_folds.py: the
classifier alone, the current fusion, and the fusion plus `w` times the
classifier's log-probability (floored at LOG_PROBABILITY_FLOOR). Prints the
training loss per epoch and, per fold, the figures fusion_folds.py prints
(docs/classification.md, fifteenth round).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from fusion_folds import _exemplar_pool, fold_line, fold_numbers, fused_scores, read
from shared.settings import Settings
from shared.taxonomy.knowledge.store import DATA_DIR as KNOWLEDGE_DIR
from shared.taxonomy.search import TAXONOMY_WEIGHTS, _has_letters
from shared.taxonomy.service import load_index

BATCH_SIZE = 1024
L2 = 1e-5
LOG_PROBABILITY_FLOOR = -10.0


def train(features: np.ndarray, labels: np.ndarray, classes: int, epochs: int, rate: float):
    """Weights and biases of a softmax regression, fitted by minibatch Adam."""
    rng = np.random.default_rng(0)
    params = [np.zeros((features.shape[1], classes), np.float32), np.zeros(classes, np.float32)]
    moments = [np.zeros_like(p) for p in params]
    squares = [np.zeros_like(p) for p in params]
    step, started = 0, time.perf_counter()
    for epoch in range(epochs):
        order, loss = rng.permutation(len(features)), 0.0
        for start in range(0, len(features), BATCH_SIZE):
            rows = order[start : start + BATCH_SIZE]
            batch, truth = features[rows], labels[rows]
            probabilities = softmax(batch @ params[0] + params[1])
            picked = probabilities[np.arange(len(rows)), truth]
            loss += float(-np.log(picked + 1e-9).sum())
            probabilities[np.arange(len(rows)), truth] -= 1.0
            probabilities /= len(rows)
            gradients = [batch.T @ probabilities + L2 * params[0], probabilities.sum(axis=0)]
            step += 1
            for param, gradient, moment, square in zip(params, gradients, moments, squares):
                moment *= 0.9
                moment += 0.1 * gradient
                square *= 0.999
                square += 0.001 * gradient * gradient
                corrected = np.sqrt(square / (1 - 0.999**step)) + 1e-8
                param -= rate * (moment / (1 - 0.9**step)) / corrected
        print(
            f"epoch {epoch}: loss {loss / len(features):.3f}, {time.perf_counter() - started:.0f} s",
            flush=True,
        )
    return params


def softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--taxonomy", required=True)
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--learning-rate", type=float, default=0.003)
    parser.add_argument("--weights", default="2,4,8,16")
    args = parser.parse_args()
    settings = Settings.from_environ()
    index = load_index(
        settings.require_taxonomy_dir(), args.taxonomy, settings.index_cache_dir(), KNOWLEDGE_DIR
    )
    exemplars = index.exemplars
    features = exemplars.vectors.reduced.astype(np.float32)
    owners = np.repeat(np.arange(len(exemplars.offsets) - 1), np.diff(exemplars.offsets))
    print(f"{args.taxonomy}: {len(features)} exemplar titles, {len(index.ids)} categories")
    weights_matrix, biases = train(
        features, owners, len(index.ids), args.epochs, args.learning_rate
    )
    base = TAXONOMY_WEIGHTS[args.taxonomy]
    for path in args.files:
        items = [i for i in read(path, args.taxonomy) if _has_letters(i["product"])]
        labels = [index.taxonomy.categories[str(i["categoryId"])] for i in items]
        label_rows = np.array([index.ids.index(label.id) for label in labels])
        folds = fold_numbers(items, 3)
        texts = [i["product"] for i in items]
        sentences, signals = index.signals_many(texts)
        pools, similarities = _exemplar_pool(index, base, sentences, signals)
        fused = fused_scores(index, base, signals, pools, similarities, texts)
        reduced = (sentences - exemplars.vectors.mean) @ exemplars.vectors.basis
        log_probabilities = np.log(softmax(reduced @ weights_matrix + biases) + 1e-30)
        floored = np.maximum(log_probabilities, LOG_PROBABILITY_FLOOR)
        print(f"\n{path.name} ({len(items)} items, folds {np.bincount(folds).tolist()})")
        print("  classifier alone: " + fold_line(index, log_probabilities, label_rows, labels, folds))
        print("  current fusion:   " + fold_line(index, fused, label_rows, labels, folds))
        for weight in (float(w) for w in args.weights.split(",")):
            line = fold_line(index, fused + weight * floored, label_rows, labels, folds)
            print(f"  fusion + {weight:g} x log p: {line}")


if __name__ == "__main__":
    main()
