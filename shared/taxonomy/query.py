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
from collections.abc import Callable, Sequence

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
# towels, "Socks 6 Pack" socks, "Barrier Wipes 50 Count" wipes. A bundle
# always; the others only with their number before them ("6 Pack", "5-Car
# Pack", "100 pcs", "50 Count") or after ("Pack de 3", "Pack of 5"): a "Fanny
# Pack", "Thread Count", "Chess Pieces" and "Gaming PCs" name their product.
BUNDLE_TERM = terms("bundle")[0]
COUNTED = re.compile(
    r"\d[\s-]*(?:[^\W\d_]+[\s-]+)?packs?\s*$|\d[\s-]*(?:count|pieces|pcs)\s*$"
    r"|\b(?:packs?|pieces|pcs)\s+(?:of|de|x)\s*\d+\s*$",
    re.IGNORECASE,
)
COUNT_FOLLOWS = re.compile(r"\s*(?:of|de|x)\s*\d", re.IGNORECASE)
COUNTED_TERMS = frozenset(terms("pack packs count pieces pcs"))


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
    if (
        len(head_terms) > 1
        and head_terms[-2] not in UNIT_TERMS  # "5000mAh Pack" is a battery pack
        and _ends_in_packaging(product, head_phrase, without_sizes, head_terms[-1])
    ):
        head_terms.pop()
    if not head_terms or not is_latin(head_terms[-1]) or head_terms[-1] in UNIT_TERMS:
        return None
    return head_terms[-1]


def _ends_in_packaging(product: str, head_phrase: str, without_sizes: str, last: str) -> bool:
    """Whether the head phrase's last term says how many come together (COUNTED)."""
    if last == BUNDLE_TERM:
        return True
    if last not in COUNTED_TERMS:
        return False
    after = split_listing(product)[0][len(head_phrase) :]
    return COUNTED.search(without_sizes) is not None or COUNT_FOLLOWS.match(after) is not None


# A shop that sells a service says so: "our Bridal Makeup service, designed
# for...", "our Hydrafacial treatment." The word ends a phrase (a comma, a
# full stop, the end of a line, "that", "for", "includes"...): "our
# hydrating treatment mask" is goods. At least one word names the service
# ("our service is second to none" is a shop's boilerplate), and none of
# SERVICES_GOODS_SELL: goods listings speak of their shipping, repair or
# engraving service. Read in the first OFFER_CHARACTERS of the listing.
SERVICES_GOODS_SELL = (
    "customer shipping delivery support repair after warranty gift return subscription"
    " engraving installation assembly wrapping printing personalisation personalization"
).split()
OFFERS_SERVICE = re.compile(
    rf"\bour\s+(?:(?!{'|'.join(SERVICES_GOODS_SELL)})[^\s.!?]+\s+){{1,8}}?"
    r"(?:(?:services?|treatments?|sessions?)(?=[ \t]*(?:[,.;:!?)\n\u2013\u2014]|$)"
    r"|\s+(?:that|which|designed|for|at|is|to|in|with|will|includes|offers|provides|uses)\b)"
    # "our Full Face Laser Hair Removal package.", "our luxurious De-Tan
    # Facial.": only where the phrase ends (not "our package includes", "our
    # relaxation package: a candle"), and only with a cue of WHO_SERVES, since
    # goods arrive in "our signature package." and spas sell retail.
    r"|(?P<offer>packages?|facials?)(?=[ \t]*(?:[,.;!?\n\u2013\u2014]|$)))",
    re.IGNORECASE,
)
# ...and says where or by whom it is given, elsewhere in the listing: "Our
# flea treatment for dogs." is goods, "our dry cut service, designed by our
# stylists" is not.
WHO_SERVES = (
    r"book(?:ing)?|appointments?|clinic|salon|therapists?|technicians?|practitioners?"
    r"|consultations?|stylists?|aestheticians?|estheticians?|specialists?"
)
SERVICE_CUES = re.compile(rf"\b(?:{WHO_SERVES}|spa|studio|treatments?|sessions?)\b", re.IGNORECASE)
SERVED_BY = re.compile(rf"\b(?:{WHO_SERVES})\b", re.IGNORECASE)
OFFER_CHARACTERS = 600
# A course is a service too, and its title says so: "Waxing Course", "VTCT
# Level 4 Certificate in Micropigmentation", "Diploma in Beauty Therapy", read
# in the title's head phrase (the course's name ends before "-", "(", ",").
# A title ending in "Course" must name an activity ("Waxing Course") or the
# listing speak of teaching (TEACHING): a "Damp Proof Course", a "Main
# Course" and an "Obstacle Course" are things. A book, a frame or a badge
# "in" or of a "Level" is goods, and its title says so (COURSE_GOODS).
ENDS_IN_COURSE = re.compile(
    r"(?P<before>[a-z]+)\s+(?:course|courses|masterclass)$", re.IGNORECASE
)
NAMES_COURSE = re.compile(
    r"(?<!gift\s)\b(?:certificate|diploma|course)\s+in\s+(?!(?:a|the|an|one|\d)\b)"
    r"|\blevel\s+\d+\s+(?:[a-z]+\s+){0,2}(?:award|certificate|diploma)\b",
    re.IGNORECASE,
)
THINGS_CALLED_COURSES = frozenset("obstacle golf of main first race damp proof".split())
TEACHING = re.compile(
    r"\b(?:learn|learning|training|tutors?|students?|lessons?|classes|modules?|accredited"
    r"|qualification|certificate|certified|enrol|enroll|teach|teaches|teaching)\b",
    re.IGNORECASE,
)
COURSE_GOODS = re.compile(
    r"\b(?:frames?|holders?|books?|edition|paperback|hardcover|volume|foil|paper|folders?"
    r"|stickers?|badges?|trophy|trophies|plaques?|prints?|posters?|packs?|cases?|templates?)\b",
    re.IGNORECASE,
)


def offers_service(product: str) -> bool:
    """Whether the listing sells the shop's own service (a treatment, a session, a course), not goods."""
    text = product[:OFFER_CHARACTERS]
    if _names_a_course(product, text):
        return True
    offer = OFFERS_SERVICE.search(text)
    if offer is None:
        return False
    cues = SERVED_BY if offer.group("offer") else SERVICE_CUES
    return (
        cues.search(text, 0, offer.start()) is not None or cues.search(text, offer.end()) is not None
    )


def _names_a_course(product: str, text: str) -> bool:
    """Whether the title names a course the listing sells (the comment above ENDS_IN_COURSE)."""
    title = split_listing(product)[0]
    if COURSE_GOODS.search(title):
        return False
    # Hyphens and runs of spaces as one space: "Gift-Certificate", "Golf  Course".
    head_phrase = " ".join(re.split(r"[\s-]+", _head_phrase(product).strip().lower()))
    if NAMES_COURSE.search(head_phrase):
        return True
    course = ENDS_IN_COURSE.search(head_phrase)
    if course is None or course.group("before") in THINGS_CALLED_COURSES:
        return False
    return course.group("before").endswith("ing") or TEACHING.search(text) is not None


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
# end of a sentence, after a preposition ("Bold meets brutalist in this
# architectural statement ring."; not "Complete this look.", "Buy this now!"),
# or after the design's name and before a verb in -s ("the Fuchsia Flame ring
# blazes", "the Seafoam Gleam necklace evokes": DESIGN_NAMED, whose words
# before the noun must be the title's head phrase). Read only for a title
# that may be a design's name (with_design_noun).
THIS_PRODUCT_ENDS = re.compile(
    r"\b(?:in|with|of|for|on|to|from|by|at|into)\s+(?P<determiner>this|these)\s+"
    r"(?P<subject>(?:(?!(?:is|are|was|were)\s)[a-z-]+\s+){0,3}?[a-z-]+)\s*[.!]"
)
DESIGN_NAMED = re.compile(
    r"\b(?P<determiner>the|our|this|these)\s+(?P<subject>(?:[a-z-]+\s+){1,3}?[a-z-]+)"
    r"\s+(?P<verb>[a-z]{2,}[a-rt-z]s)\b"
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
# made from", "Our stylists are"), times, offers and looks ("Perfect for this
# season.", "Don't miss this deal!", "Make a statement with this bold shade.").
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
        " summer winter autumn fall spring christmas halloween easter thanksgiving holiday way world"
        " deal offer sale bargain look shade tone hue only now too again here there"
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
    product: str,
    patterns: Sequence[re.Pattern[str]] = (THIS_PRODUCT_IS, MADE_FROM),
    accept: Callable[[re.Match[str]], bool] = lambda subject: True,
) -> tuple[re.Match[str], str] | None:
    """The earliest subject near the description's start that is the product, and its
    noun as a word of the cleaned description ("earrings", not the term "earring")."""
    if names_product_first(product):
        return None
    raw = split_listing(product)[1][:DESCRIPTION_SUBJECT_RAW_CHARS]
    description = clean(raw)[:DESCRIPTION_SUBJECT_CHARS]
    subjects = (match for pattern in patterns for match in pattern.finditer(description))
    for subject in sorted(subjects, key=lambda match: match.start()):
        if not accept(subject):
            continue
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


def _names_design(subject: re.Match[str], name: list[str]) -> bool:
    """Whether a DESIGN_NAMED subject is the design's name and a noun, before a verb
    ("the Fuchsia Flame ring blazes"; not "the Fuchsia Flame really shines")."""
    *named, noun = subject.group("subject").split()
    return named == name and not _is_adverb(noun) and bool(terms(subject.group("verb")))


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
    head = _head_phrase(product).rstrip()
    name = " ".join(head.split())
    # A design's name is a proper name: "the Willow ring sways", not "the willow tree sways".
    raw = description[:DESCRIPTION_SUBJECT_RAW_CHARS]
    written = any(form[:1].isupper() and form in raw for form in (name, name.title()))
    found = _description_subject(
        product,
        (THIS_PRODUCT_IS, MADE_FROM, THIS_PRODUCT_ENDS, DESIGN_NAMED),
        lambda subject: subject.re is not DESIGN_NAMED
        or written and _names_design(subject, clean(name).split()),
    )
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
    after = title[len(head) :]  # the space before a "(" or "for", and what follows
    return f"{head} {noun}{after}".rstrip() + f"\n{description}"
