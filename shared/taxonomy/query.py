"""From a product listing to the weighted terms searched for.

The title (first line) names the product; the description mostly describes
it (materials, sizes, shipping), so its terms count less and only its
beginning is read. The sentence encoder reads the title and the start of the
description as one text: a bare "LORENE TOP" says little until "triangle top,
fully lined" follows.
"""

from __future__ import annotations

import functools
import re
from collections import Counter, defaultdict
from collections.abc import Sequence

from shared.taxonomy.text import clean, is_latin, terms

TITLE_WEIGHT = 1.0
# A title word that names a specification ("RAM" in "8GB RAM") says less
# about what the product is than its other words.
SPECIFICATION_WEIGHT = 0.3
DESCRIPTION_WEIGHT = 0.3
DESCRIPTION_MAX_TERMS = 100
# Characters of description the sentence encoder reads after the title: 150
# keeps nearly all of the gain of 300 (dev recall@15 within 0.005) at about
# half the encoding time.
SEMANTIC_DESCRIPTION_CHARS = 150
# Characters of description the branch model's sentence vector reads: which
# department a listing is in is a question about the whole listing, and a
# bare name ("Sunset Coil") often says it only further on ("this sculptural
# ring"). 400 chosen on the store folds of dev.jsonl (docs/classification.md).
LISTING_DESCRIPTION_CHARS = 400
# Where a title's head phrase ends: "Euro Sham - 26x26", "Graphic T-Shirt —
# Epic Fire", "Valance with Band", "Mug, Blue", "Card: Phantasmal Flames",
# "Florero para muro" (Spanish, French, German, Italian "for" / "with" / "of"
# included). Not "pro" or "do": English titles use them as words.
HEAD_PHRASE_END = re.compile(
    r"\s(?:for|with|w/|-|–|—|\||para|con|de|del|pour|avec|für|mit|per|da)\s|,|\(|:",
    re.IGNORECASE,
)


# A quantity and its unit ("8GB", "256 GB", "5000 IU", "65-inch", "50 ft").
UNIT_WORDS = (
    "gb tb mb ghz mhz hz mah wh kw w v ah mm cm in inch ft yd oz ml cl l qt gal kg mg g lb lbs iu ct"
).split()
UNITS = r"fl\.?\s?oz|" + "|".join(UNIT_WORDS)
# Capacities and clock rates are said of a part: the word after one names a
# specification of the product ("8GB RAM", "256GB SSD", "3.2GHz processor"),
# where a size or weight goes before the product's own noun ("45mm smartwatch").
CAPACITY_UNITS = r"gb|tb|mb|ghz|mhz"
NUMBER = r"\d+(?:[.,]\d+)?[\s-]?"
# The word after a capacity is a specification. Units themselves are not
# discounted: knowledge titles hold them too ("1000 mg" tablets, a "28 cm" pan).
SPECIFICATION = re.compile(rf"{NUMBER}(?:{CAPACITY_UNITS})\b\s+([^\W\d_]+)", re.IGNORECASE)
# A head phrase ending in a specification ("MacBook Air 8GB RAM") does not end
# in the product's noun.
ENDS_IN_SPECIFICATION = re.compile(
    rf"{NUMBER}(?:{CAPACITY_UNITS})\b\s+[^\W\d_]+\s*$", re.IGNORECASE
)
# Sizes after an English title's noun ("Face Moisturizer 4oz", "Garden Hose
# 50 ft", "Portable SSD 1TB"): the noun is the word before them. In a
# listing whose function words are Spanish, French, Italian or Portuguese
# (names_product_first) that word is a modifier, and it has no head term;
# German titles ("Bratpfanne Edelstahl 28 cm") are not told apart. At most
# four sizes are skipped: an unbounded repeat is searched in quadratic time.
TRAILING_SIZES = re.compile(rf"(?:\s*{NUMBER}(?:{UNITS})\b\.?){{1,4}}\s*$", re.IGNORECASE)
# A head term that is a unit ("Rug 5 ft x 7 ft": the sizes are joined by "x") names no product.
UNIT_TERMS = frozenset(terms(" ".join(UNIT_WORDS)))


def split_listing(product: str) -> tuple[str, str]:
    title, _, description = product.strip().partition("\n")
    return title, description


def query_terms(product: str) -> dict[str, float]:
    title, description = split_listing(product)
    weights: defaultdict[str, float] = defaultdict(float)
    specifications = Counter(terms(" ".join(SPECIFICATION.findall(title))))
    for term in terms(title):
        if specifications[term] > 0:
            specifications[term] -= 1
            weights[term] += SPECIFICATION_WEIGHT
        else:
            weights[term] += TITLE_WEIGHT
    for term in terms(description)[:DESCRIPTION_MAX_TERMS]:
        weights[term] += DESCRIPTION_WEIGHT
    return dict(weights)


# Function words that tell a listing in a language that names the product
# first ("Interruptor doble New Light", "Cibo secco per gatti") from one in
# English, which names it last. Words both languages use ("a", "no", "in")
# are left out.
NOUN_FIRST_WORDS = frozenset(
    """
    de del la las el los y para con por una unos unas que es su sus al lo
    le les des du et pour avec une au aux sur dans est
    il di della delle dei per nel nella gli
    da dos das em com uma ao pelo pela
    """.split()
)
ENGLISH_WORDS = frozenset(
    "the and for with of to is your this our an on it that are from by you its".split()
)
WORDS = re.compile(r"[a-z]+")


# Asked of one listing by several signals (the regional names, the regional
# head, the description head): the answer is kept for the batch being scored.
@functools.lru_cache(maxsize=256)
def names_product_first(product: str) -> bool:
    """Whether the listing's function words are mostly Spanish, French, Italian or Portuguese."""
    words = WORDS.findall(clean(product))
    noun_first = sum(word in NOUN_FIRST_WORDS for word in words)
    english = sum(word in ENGLISH_WORDS for word in words)
    return noun_first > english


# Words for how many come together, not for what: "Bath Towel Bundle" is
# towels, "Barrier Wipes 50 Count" wipes. "Pack" only with its number ("Socks
# 6 Pack", "5-Car Pack", "Mamelucos Pack de 3"): a "Fanny Pack" is one.
PACKAGING_TERMS = frozenset(terms("bundle bundles pcs pieces count"))
PACK_TERM = terms("pack")[0]
QUANTITY_PACK = re.compile(
    r"\d[\s-]*(?:[^\W\d_]+[\s-]+)?packs?\b|\bpacks?\s+(?:of|de|x)\s*\d", re.IGNORECASE
)


def head_term(product: str) -> str | None:
    """The last term of the title's head phrase: the head noun of an English title.

    "Croscill Everly Silver Euro Sham" is a sham, whatever its brand and colour
    say; the words after "for" / "with" / " - " name what it goes with.
    Trailing sizes are skipped ("Garden Hose 50 ft" is a hose), and so are words
    of packaging ("Bath Towel Bundle" is a towel). None when the
    phrase ends in a specification ("MacBook Air 8GB RAM"), or in a size in a
    listing that names its product first: the product's noun is elsewhere.
    """
    head_phrase = _head_phrase(product)
    if ENDS_IN_SPECIFICATION.search(head_phrase):
        return None
    without_sizes = TRAILING_SIZES.sub("", head_phrase)
    if without_sizes != head_phrase and names_product_first(product):
        return None
    head_terms = terms(without_sizes)
    title = split_listing(product)[0]
    while len(head_terms) > 1 and (
        head_terms[-1] in PACKAGING_TERMS
        or head_terms[-1] == PACK_TERM and QUANTITY_PACK.search(title) is not None
    ):
        head_terms.pop()
    if not head_terms or not is_latin(head_terms[-1]) or head_terms[-1] in UNIT_TERMS:
        return None
    return head_terms[-1]


# A shop that sells a service says so: "our Bridal Makeup service, designed
# for...", "our Hydrafacial treatment.", "our Full Face Laser Hair Removal
# package." The word ends a phrase (a comma, a
# full stop, the end of a line, "that", "for", "includes"...): "our
# hydrating treatment mask" is goods. At least one word names the service
# ("our service is second to none" is a shop's boilerplate), and none of
# SERVICES_GOODS_SELL: goods listings speak of their shipping, repair or
# engraving service. Read in the first OFFER_CHARACTERS of the listing.
SERVICES_GOODS_SELL = (
    "customer shipping delivery support repair after warranty gift return subscription"
    " engraving installation assembly wrapping printing personalisation personalization"
).split()
PHRASE_ENDS = r"[ \t]*(?:[,.;:!?)\n\u2013\u2014]|$)"
OFFERS_SERVICE = re.compile(
    rf"\bour\s+(?:(?!{'|'.join(SERVICES_GOODS_SELL)})[^\s.!?]+\s+){{1,8}}?"
    rf"(?:(?:services?|treatments?|sessions?)(?={PHRASE_ENDS}"
    r"|\s+(?:that|which|designed|for|at|is|to|in|with|will|includes|offers|provides|uses)\b)"
    # "our Full Face Laser Hair Removal package.", "our luxurious De-Tan Facial."
    # A package that "includes" or "is" is as often a box of goods.
    rf"|(?:packages?|facials?)(?={PHRASE_ENDS}))",
    re.IGNORECASE,
)
# ...and says where or by whom it is given, elsewhere in the listing: "Our
# flea treatment for dogs." is goods, "our dry cut service, designed by our
# stylists" is not.
SERVICE_CUES = re.compile(
    r"\b(?:book(?:ing)?|appointments?|clinic|salon|spa|studio|therapists?|technicians?"
    r"|practitioners?|consultations?|treatments?|sessions?|stylists?)\b",
    re.IGNORECASE,
)
OFFER_CHARACTERS = 600
# A course is a service too, and its title says so: "Waxing Course", "VTCT
# Level 4 Certificate in Micropigmentation", "Diploma in Beauty Therapy". Read
# in the title's head phrase (the course's name ends before "-", "(", ","). A
# course that is a thing says what it is ("Obstacle Course", "Golf Course
# Flag"), and a certificate for a gift is not "in" a subject.
TEACHES = re.compile(
    r"(?<!obstacle)(?<!golf)(?<!\bof)\s(?:course|courses|masterclass)\s*$"
    r"|(?<!gift\s)\b(?:certificate|diploma|course)\s+in\s+(?!(?:a|the|an|one|\d)\b)"
    r"|\blevel\s+\d+\s+(?:[a-z]+\s+){0,2}?(?:award|certificate|diploma)\b",
    re.IGNORECASE,
)


def offers_service(product: str) -> bool:
    """Whether the listing sells the shop's own service (a treatment, a session, a course), not goods."""
    text = product[:OFFER_CHARACTERS]
    if TEACHES.search(" " + _head_phrase(product)):
        return True
    offer = OFFERS_SERVICE.search(text)
    return offer is not None and (
        SERVICE_CUES.search(text, 0, offer.start()) is not None
        or SERVICE_CUES.search(text, offer.end()) is not None
    )


# Terms a product-first title may open with before its noun: articles ("Os
# Óculos", "Uma Lâmpada", "Il Cuscino"), function words and units ("5mm
# Tubo"). As terms: the stop words of the text module drop some already.
BEFORE_PRODUCT_FIRST_HEAD = (
    frozenset(terms("el la los las lo un una unos unas o os a as um uma uns umas le les une des il gli"))
    | frozenset(terms(" ".join(NOUN_FIRST_WORDS)))
    | UNIT_TERMS
)


# What a description says the product is, near its start: "This sculptural
# ring is...", "Our hand-poured candles come...", "stylish earrings made
# from...". The noun is read from the subject (_description_subject). Both
# patterns search cleaned, lower-case text.
THIS_PRODUCT_IS = re.compile(
    r"\b(?P<determiner>this|these|our|the)\s+(?P<subject>(?:[a-z-]+\s+){0,3}?[a-z-]+)\s+"
    r"(?:is|are|makes?|features?|comes?|offers?|combines?|brings?|adds?|gives?|helps?|provides?)\b"
)
# Not after a letter or hyphen: a word starting mid-word would make the search quadratic.
MADE_FROM = re.compile(
    r"(?<![a-z-])(?P<subject>[a-z-]+)\s+(?:is\s+|are\s+)?made\s+(?:from|of|with|in|by|using)\b"
)
# Where a design's description names it without one of those verbs: at the
# end of a sentence ("Bold meets brutalist in this architectural statement
# ring."; not at a comma, "this long, elegant piece", nor across a verb, "this
# is the look."), or after the design's
# name and before a verb in -s ("the Fuchsia Flame ring blazes", "the
# Seafoam Gleam necklace evokes": DESIGN_NAMED, built for each title). Read
# only for a title that may be a design's name (with_design_noun).
THIS_PRODUCT_ENDS = re.compile(
    r"\b(?P<determiner>this|these)\s+(?P<subject>(?:(?!(?:is|are|was|were)\s)[a-z-]+\s+){0,3}?"
    r"[a-z-]+)\s*[.!]"
)
DESIGN_NAMED = (
    r"\b(?P<determiner>the|our|this|these)\s+(?P<subject>{name}\s+[a-z-]+)"
    r"\s+(?:is|are|has|have|[a-z]*[a-rt-z]s)\b"
)
# Determiners that point at the listed product itself; "the" and "our" as often
# point at a part of it or at the shop's people ("The blade is", "Our bakers are").
THIS_PRODUCT = frozenset(("this", "these"))
DESCRIPTION_SUBJECT_CHARS = 300
# Characters of the raw description cleaned to find those: room for HTML tags
# and entities, without cleaning a bulk item's megabyte of text to read 300.
DESCRIPTION_SUBJECT_RAW_CHARS = 8 * DESCRIPTION_SUBJECT_CHARS
# Subjects that are not the product: words for products in general, for the
# shop and the listing, for what a product is made of or has, for praise, and
# for people ("Our products are made to order", "The fabric is soft", "The
# chain is 18 inches", "Hand made with care", "This beauty is", "The sole is
# made from", "Our stylists are"), and times ("Perfect for this season.").
NOT_THE_PRODUCT = frozenset(
    terms(
        "product item piece design collection solution style range line listing"
        " shop store brand team seller customer shipping packaging price quality size"
        " colour color weight dimension gift model goal mission story feature formula"
        " fabric material leather wood glass stone metal cotton finish texture"
        " silicone rubber steel plastic ceramic porcelain gold silver"
        " chain frame lid hook strap handle band battery back base upper sole interior exterior"
        " flavor flavour scent aroma taste ingredient"
        " beauty cutie classic essential bestseller favourite favorite"
        " technician stylist therapist artist baker maker founder staff teacher"
        " these they each one everything hand custom tailor proudly sell which what also both"
        " guy have"
        " season today tonight year month week weekend day time moment morning evening"
        " summer winter autumn christmas holiday way world"
    )
)
# Words that end the subject's noun phrase: what follows them is not the product.
# Not "of": "the kind of seat", "a pair of earrings" name the product after it.
SUBJECT_PREPOSITIONS = frozenset("from for by with in at on to".split())
# Participles that end it too, where a preposition follows them ("This blanket
# woven from merino is", "These earrings handmade in Italy are"). Not every
# word in -ed: "the top of the bed", "this daybed".
PARTICIPLES = frozenset(
    """made handmade hand-made woven sewn spun knit knitted grown built crafted handcrafted
    designed inspired poured scented printed carved painted stitched embroidered dyed
    finished blown cast forged""".split()
)


def description_head(product: str) -> str | None:
    """The noun an English listing's description first says the product is, near its start."""
    found = _description_subject(product)
    return terms(found[1])[-1] if found else None


def _description_subject(
    product: str, patterns: Sequence[re.Pattern[str]] = (THIS_PRODUCT_IS, MADE_FROM)
) -> tuple[re.Match[str], str] | None:
    """The earliest subject near the description's start that is the product, and its
    noun as a word of the cleaned description ("earrings", not the term "earring")."""
    if names_product_first(product):
        return None
    raw = split_listing(product)[1][:DESCRIPTION_SUBJECT_RAW_CHARS]
    description = clean(raw)[:DESCRIPTION_SUBJECT_CHARS]
    subjects = (match for pattern in patterns for match in pattern.finditer(description))
    for subject in sorted(subjects, key=lambda match: match.start()):
        words = subject.group("subject").split()
        # "this single-seater from Great Outdoor is": the noun phrase ends before its preposition.
        ends = [at for at, word in enumerate(words) if word in SUBJECT_PREPOSITIONS]
        phrase = words[: ends[0]] if ends else words
        while ends and len(phrase) > 1 and phrase[-1] in PARTICIPLES:
            phrase = phrase[:-1]
        # Its last word that is a term: "this jersey set" is a jersey ("set" is a stop word).
        noun = next((word for word in reversed(phrase) if terms(word)), None)
        if noun is None or terms(noun)[-1] in NOT_THE_PRODUCT:
            continue
        if subject.re is MADE_FROM and _is_adverb(noun):
            continue  # "Lovingly made with", "Sustainably made from"
        return subject, noun
    return None


def _is_adverb(word: str) -> bool:
    """An adverb in -ly; not a short noun ("jelly", "lily") nor a fly ("butterfly")."""
    return word.endswith("ly") and len(word) > 5 and not word.endswith("fly")


def product_first_head(product: str) -> str | None:
    """The first term of the title's head phrase, in a listing that names its product first.

    "Tablero Eléctrico Monofásico 12 Circuitos" is a tablero, "Os Óculos de
    sol" are óculos, "5mm Tubo" a tubo: function words and units before the
    noun are skipped. None for a listing in English (and other languages that
    name the product last), or whose first term is in another script.
    """
    if not names_product_first(product):
        return None
    head_terms = [
        term for term in terms(_head_phrase(product)) if term not in BEFORE_PRODUCT_FIRST_HEAD
    ]
    return head_terms[0] if head_terms and is_latin(head_terms[0]) else None


def _head_phrase(product: str) -> str:
    """The title up to where its head phrase ends (HEAD_PHRASE_END)."""
    return HEAD_PHRASE_END.split(split_listing(product)[0], maxsplit=1)[0]


def semantic_text(product: str) -> str:
    """The title and the beginning of the description, entity- and tag-free."""
    return _title_and_description_start(product, SEMANTIC_DESCRIPTION_CHARS)


def listing_text(product: str) -> str | None:
    """The title and more of the description, for the branch model; None when semantic_text holds it all."""
    _, description = split_listing(product)
    if len(clean(description)) <= SEMANTIC_DESCRIPTION_CHARS:
        return None
    return _title_and_description_start(product, LISTING_DESCRIPTION_CHARS)


def _title_and_description_start(product: str, characters: int) -> str:
    title, description = split_listing(product)
    return f"{clean(title)}. {clean(description)[:characters]}".strip(" .")


# A title of at most this many terms may be only a design's name: "Crayfish",
# "Computer mouse", "Lustre Tide" are earrings and a ring, as their
# descriptions say.
DESIGN_NAME_TERMS = 2


def with_design_noun(product: str) -> str:
    """The listing with its description's noun after the title's head phrase, when the
    title may be only a design's name and the description plainly says what the design is.

    "Computer mouse" whose description says "stylish earrings made from PLA"
    reads as "Computer mouse earrings" to every signal, as a shopper reads it
    who has seen the description. Plainly: the subject is "this / these ..."
    ("This sculptural ring is"), the noun is what is made from something
    ("earrings made from PLA"), or the subject names the title too ("the
    Lustre Tide ring is"). A short title of a product is left as it is:
    "Chef Knife" whose description begins "The blade is forged..." names its
    product, and the blade is a part of it.
    """
    title, description = split_listing(product)
    title_terms = terms(title)
    if len(title_terms) > DESIGN_NAME_TERMS:
        return product
    design_named = re.compile(DESIGN_NAMED.format(name=r"\s+".join(map(re.escape, clean(title).split()))))
    found = _description_subject(product, (THIS_PRODUCT_IS, MADE_FROM, THIS_PRODUCT_ENDS, design_named))
    if found is None:
        return product
    subject, noun = found
    if terms(noun)[-1] in title_terms:
        return product
    names_design = (
        subject.re is MADE_FROM
        or subject.group("determiner") in THIS_PRODUCT
        or bool(title_terms) and set(title_terms) <= set(terms(subject.group("subject")))
    )
    if not names_design:
        return product
    # Where head_term reads it: "Gift for Dad" becomes "Gift wallet for Dad".
    head_phrase = _head_phrase(product)
    head = head_phrase.rstrip()
    after = title[len(head) :]  # the space before a "(" or "for", and what follows
    return f"{head} {noun}{after}".rstrip() + f"\n{description}"
