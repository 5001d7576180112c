"""Draw the sample of real merchant listings relabelled by hand, and check the labels.

    python bench/relabel_sample.py                      # the sample, one JSON line each, no labels
    python bench/relabel_sample.py --tuning             # the second sample, for tuning
    python bench/relabel_sample.py --fresh              # the third sample
    python bench/relabel_sample.py --final              # the fourth sample, read once
    python bench/relabel_sample.py --check FILE.jsonl   # every categoryId/categoryPath against the taxonomy files

The sample: the Google lines and the Shopify lines of ../shared/eval/dev.jsonl, each
shuffled with random.Random(2026) (one generator, Google first), the first 120 of
each, at most 12 from any one store (`source`) so that no big feed dominates.
The labels in bench/data/relabelled-dev.jsonl were written by a reviewer from the
taxonomy files alone; the merchants' labels are not printed here on purpose.
That set measures; it is never tuned on. The second sample (--tuning) is drawn
the same way from the lines the first left out, with random.Random(2027), up to 150
of each taxonomy (Google's stores give 83) and at most 12 from a store: bench/data/relabelled-tune.jsonl,
labelled the same way, is what weights for real listings are chosen on (by
store folds). The third sample (--fresh, twenty-second round) is drawn from the
lines neither took, with random.Random(2028), up to 120 of each taxonomy and at
most 12 from a store: bench/data/relabelled-fresh.jsonl, labelled the same way,
was read once, to measure on listings no round had read, and then studied for
the round's changes. The fourth (--final, the same round) is drawn the same way
from what the first three left, with random.Random(2029): bench/data/relabelled-final.jsonl,
read once, on the round's final code.
"""

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared"
DEV_FILE = SHARED / "eval" / "dev.jsonl"
GOOGLE_FILE = SHARED / "taxonomies" / "google" / "taxonomy-with-ids.en-US.txt"
SHOPIFY_FILE = SHARED / "taxonomies" / "shopify" / "categories.txt"
SEED = 2026
PER_TAXONOMY = 120
PER_STORE = 12
MEASURED_FILE = Path(__file__).resolve().parent / "data" / "relabelled-dev.jsonl"
TUNING_SEED = 2027
TUNING_PER_TAXONOMY = 150
TUNING_PER_STORE = 12
TUNING_FILE = Path(__file__).resolve().parent / "data" / "relabelled-tune.jsonl"
FRESH_SEED = 2028
FRESH_FILE = Path(__file__).resolve().parent / "data" / "relabelled-fresh.jsonl"
FINAL_SEED = 2029


def read_dev() -> list[dict]:
    """dev.jsonl with each line's 1-based number added as `devLine`."""
    with DEV_FILE.open(encoding="utf-8") as handle:
        return [dict(json.loads(line), devLine=number) for number, line in enumerate(handle, 1)]


def draw_sample(
    seed: int = SEED,
    per_taxonomy: int = PER_TAXONOMY,
    per_store_cap: int = PER_STORE,
    excluded: frozenset[int] = frozenset(),
) -> list[dict]:
    """Each taxonomy's dev lines shuffled (one generator), the first `per_taxonomy`
    not excluded (by devLine), at most `per_store_cap` from one store."""
    rng = random.Random(seed)
    dev = read_dev()
    sample = []
    for taxonomy in ("Google", "Shopify"):
        lines = [line for line in dev if line["taxonomy"] == taxonomy]
        rng.shuffle(lines)
        per_store: Counter = Counter()
        taken = []
        for line in lines:
            if len(taken) == per_taxonomy:
                break
            if line["devLine"] in excluded or per_store[line["source"]] == per_store_cap:
                continue
            per_store[line["source"]] += 1
            taken.append(line)
        sample.extend(taken)
    return sample


def read_taxonomies() -> dict[str, dict[str, str]]:
    """{taxonomy: {id: full path}} from the two taxonomy files."""
    google = {}
    for line in GOOGLE_FILE.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            category_id, path = line.split(" - ", 1)
            google[category_id] = path
    shopify = {}
    for line in SHOPIFY_FILE.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            gid, path = line.split(" : ", 1)
            shopify[gid.strip().rsplit("/", 1)[1]] = path.strip()
    return {"Google": google, "Shopify": shopify}


def draw_tuning_sample() -> list[dict]:
    """The second sample: lines the measured set does not hold, another seed."""
    return draw_sample(TUNING_SEED, TUNING_PER_TAXONOMY, TUNING_PER_STORE, dev_lines(MEASURED_FILE))


def draw_fresh_sample() -> list[dict]:
    """The third sample: lines neither of the first two holds, a third seed."""
    taken = dev_lines(MEASURED_FILE) | dev_lines(TUNING_FILE)
    return draw_sample(FRESH_SEED, PER_TAXONOMY, PER_STORE, taken)


def draw_final_sample() -> list[dict]:
    """The fourth sample: lines none of the first three holds, a fourth seed."""
    taken = dev_lines(MEASURED_FILE) | dev_lines(TUNING_FILE) | dev_lines(FRESH_FILE)
    return draw_sample(FINAL_SEED, PER_TAXONOMY, PER_STORE, taken)


def dev_lines(labelled_file: Path) -> frozenset[int]:
    """The dev.jsonl lines a labelled set holds."""
    return frozenset(
        json.loads(line)["devLine"] for line in labelled_file.read_text(encoding="utf-8").splitlines()
    )


# A labelled line's source is its dev line's, after the name of its set.
SOURCE_PREFIXES = ("relabelled-dev:", "relabelled-tune:", "relabelled-fresh:", "relabelled-final:")


def check(labelled_file: Path) -> int:
    """Print per-taxonomy counts and agreement; return the number of bad lines."""
    taxonomies = read_taxonomies()
    dev = read_dev()
    counts: Counter = Counter()
    agree: Counter = Counter()
    vague: Counter = Counter()
    bad = 0
    seen_dev_lines: set[int] = set()
    for number, raw in enumerate(labelled_file.read_text(encoding="utf-8").splitlines(), 1):
        line = json.loads(raw)
        taxonomy = line["taxonomy"]
        path = taxonomies[taxonomy].get(line["categoryId"])
        original = dev[line["devLine"] - 1]
        problems = []
        if path is None:
            problems.append(f"unknown id {line['categoryId']}")
        elif path != line["categoryPath"]:
            problems.append(f"path differs from file: {path}")
        if original["product"] != line["product"] or original["taxonomy"] != taxonomy:
            problems.append("product/taxonomy differ from dev.jsonl")
        if line["source"] not in (prefix + original["source"] for prefix in SOURCE_PREFIXES):
            problems.append("source differs from dev.jsonl")
        if line["devLine"] in seen_dev_lines:
            problems.append("devLine labelled twice")
        seen_dev_lines.add(line["devLine"])
        if problems:
            bad += 1
            print(f"line {number}: " + "; ".join(problems))
        counts[taxonomy] += 1
        agree[taxonomy] += line["merchantAgrees"]
        vague[taxonomy] += line.get("vague", False)
    for taxonomy in sorted(counts):
        print_counts(taxonomy, counts[taxonomy], agree[taxonomy], vague[taxonomy])
    print_counts("all", sum(counts.values()), sum(agree.values()), sum(vague.values()))
    print(f"bad lines: {bad}")
    return bad


def print_counts(name: str, lines: int, agreeing: int, vague: int) -> None:
    share = agreeing / lines if lines else 0.0
    print(f"{name}: {lines} lines, merchant agrees {agreeing} ({share:.0%}), vague {vague}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--check", type=Path, help="verify a labelled file's ids and paths")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--tuning", action="store_true", help="draw the second sample, for tuning")
    which.add_argument("--fresh", action="store_true", help="draw the third sample")
    which.add_argument("--final", action="store_true", help="draw the fourth sample, read once")
    args = parser.parse_args()
    if args.check:
        sys.exit(1 if check(args.check) else 0)
    if args.tuning:
        sample = draw_tuning_sample()
    elif args.fresh:
        sample = draw_fresh_sample()
    elif args.final:
        sample = draw_final_sample()
    else:
        sample = draw_sample()
    for line in sample:
        unlabelled = {key: line[key] for key in ("product", "taxonomy", "source", "devLine")}
        print(json.dumps(unlabelled, ensure_ascii=False))


if __name__ == "__main__":
    main()
