import pytest

from shared.taxonomy.query import (
    description_head,
    names_product_first,
    offers_service,
    product_first_head,
    SPECIFICATION_WEIGHT,
    TITLE_WEIGHT,
    head_term,
    listing_text,
    query_terms,
    semantic_text,
    with_design_noun,
)
from shared.taxonomy.text import terms


@pytest.mark.parametrize(
    ("product", "head"),
    [
        ("Croscill Everly Silver Euro Sham", "sham"),
        ("Wooded River Stampede Sham - Euro 26x26\nA sham for your pillows", "sham"),
        ("Tailored Valance with Band", "valance"),
        ("Abe Lincoln Coffee Mug, Blue", "mug"),
        ("Ceramic Mug (350 ml)", "mug"),
        ("Florero para muro grande", "florero"),
        ("Dog Bed for Large Dogs", "bed"),
        ("Anime Flame Sword T-Shirt — Epic Fire Warrior Graphic Tee", "shirt"),
        ("Mega Gengar ex card: Phantasmal Flames", "card"),
        ("Crucial 16GB DDR4 RAM", "ram"),
    ],
)
def test_head_term_is_the_last_term_before_the_title_goes_on(product, head):
    assert head_term(product) == terms(head)[0]


def test_head_term_reads_the_title_only():
    assert head_term("Blue Mug\nA sham") == terms("mug")[0]


def test_head_term_of_a_title_without_terms_is_none():
    assert head_term("12345 - 67\nCeramic mug") is None


@pytest.mark.parametrize(
    "product",
    [
        "Apple MacBook Air 13-inch M2 8GB RAM",
        "Lenovo IdeaPad 15.6in 512 GB SSD",
        "Sartén antiadherente 28 cm\nSartén de aluminio con mango de madera",
        "Rug 5 ft x 7 ft",
    ],
)
def test_a_title_ending_in_a_specification_a_unit_or_a_product_first_size_has_no_head_term(
    product,
):
    # The laptop is no RAM; a Spanish listing names its product first, not before the size;
    # a unit is no product.
    assert head_term(product) is None


@pytest.mark.parametrize(
    ("product", "head"),
    [
        ("Coconut Oil Face & Body Moisturizer 4oz", "moisturizer"),
        ("Garden Hose 50 ft", "hose"),
        ("Samsung T7 Portable SSD 1TB", "ssd"),
        ("Makita belt sander 3 x 21 inch", "sander"),
        ("Natural Daily Moisturizer 1.7oz.", "moisturizer"),
        ("Clarifying Shampoo 16.9 fl oz", "shampoo"),
        ("Vodka 70cl", "vodka"),
    ],
)
def test_the_head_term_of_an_english_title_ending_in_sizes_is_the_word_before_them(product, head):
    assert head_term(product) == terms(head)[0]


@pytest.mark.parametrize(
    ("product", "head"),
    [
        ("Spa Beige Complete Bath Towel Bundle", "towel"),
        ("Barrier Wipes 50 Count", "wipes"),
        ("Cotton Crew Socks 6 Pack", "socks"),
        ("Hot Wheels 5-Car Pack", "car"),
        ("PopYum Biberones Pack de 3", "biberones"),
        ("Baby Bodysuits Pack of 5", "bodysuits"),
        # A pack without its number is the product, and a lone word stays.
        ("Fanny Pack for Women - 2 Pack", "pack"),
        ("Queen Sheet Set 800 Thread Count", "count"),
        ("Power Bank 5000mAh Pack", "pack"),
        ("Leather Fanny Pack", "pack"),
        ("Reusable Ice Pack", "pack"),
        ("Bundle", "bundle"),
    ],
)
def test_the_head_term_is_not_a_word_of_packaging(product, head):
    assert head_term(product) == terms(head)[0]


def test_specification_words_weigh_less_than_the_product_words():
    weights = query_terms("Apple MacBook Air 8GB RAM")
    (ram,) = terms("RAM")
    (macbook,) = terms("MacBook")
    assert weights[ram] == SPECIFICATION_WEIGHT < weights[macbook] == TITLE_WEIGHT


def test_the_listing_text_reads_further_into_the_description_than_the_semantic_text():
    description = "A sculptural piece with a hammered band and an open design. " * 3
    product = f"Sunset Coil\n{description}This ring is adjustable."
    assert "ring is" not in semantic_text(product)
    listing = listing_text(product)
    assert listing is not None and listing.startswith(semantic_text(product))
    assert "ring is" in listing


def test_a_listing_the_semantic_text_holds_whole_has_no_listing_text():
    assert listing_text("Sunset Coil\nA gold-plated ring.") is None
    assert listing_text("Sunset Coil") is None


def test_listings_that_name_the_product_first_are_told_by_their_function_words():
    assert names_product_first("Interruptor doble New Light\nEl interruptor de la sala es blanco")
    assert names_product_first("Cibo secco per gatti adulti al salmone, della casa")
    assert not names_product_first("Dog leash for the park, with a padded handle")
    assert not names_product_first("Zapatillas Doradas")  # no function word at all


@pytest.mark.parametrize(
    "product",
    [
        "Bridal Makeup\nExperience timeless beauty with our Bridal Makeup service, designed for you"
        " by our makeup artists. Book a consultation.",
        "Hydrafacial\nOur Hydrafacial treatment. Book today",
        "Signature Facial\nOUR SIGNATURE FACIAL TREATMENT\nAt the salon, 60 minutes",
        "Dry Cut\nOur dry cut service includes a wash by our stylists.",
        "Lower Leg Laser Hair Removal\nSmooth skin with our laser hair removal sessions that last."
        " Our clinic's technicians...",
        "De-Tan Facial\nReclaim your glow with our luxurious De-Tan Facial. Our expert"
        " aestheticians exfoliate. This bespoke treatment soothes.",
        "Full Face Laser Hair Removal\nAchieve smooth skin with our Full Face Laser Hair Removal"
        " package. This comprehensive treatment targets unwanted hair at our beauty clinic.",
        # A course says so in its title alone.
        "Waxing Course",
        "ABT Accredited Hydrafacial Day Course (Copy)\nAfter making the purchase, call us.",
        "VTCT Level 4 Certificate in Micropigmentation\nFully accredited qualification",
        "VTCT Skills Level 3 Award in Anatomical and physiological knowledge of body systems",
        "Diploma in Beauty Therapy - Level 3",
    ],
)
def test_a_listing_offering_the_shops_own_service_is_told(product):
    assert offers_service(product)


@pytest.mark.parametrize(
    "product",
    [
        # What goods listings say of their shop's service.
        "Argan Hair Serum 50ml\nQuestions? Our customer service team answers within a day.",
        "Dog Bed\nThank you for choosing our service! Salon quality.",
        "Sofa\nOur white-glove delivery service, booked online.",
        "TV\nTwo years of our repair service. Book a technician.",
        "Ring\nAdd our engraving service, free. A salon favourite.",
        # Goods sold as treatments, and a phrase that goes on.
        "Flea Drops\nOur flea treatment for dogs.",
        "Acne Gel\nOur acne treatment, clinically proven.",
        "Repair Mask\nOur intensive hair treatment mask restores dry ends. Salon formula.",
        "Yoga Mat\nPerfect for our yoga sessions at home.",
        "Wax Warmer\nA salon-grade warmer for waxing services at home.",  # not "our"
        "Facial Roller\nA spa ritual. " + "Cool jade stone. " * 40 + "Our facial service.",
        "Rosehip Facial Oil\nOur facial oil is cold-pressed. Spa quality at home.",
        "Candle Gift Set\nOur relaxation package includes a candle and bath salts for a spa night.",
        "Lavender Spa Candle\nPoured in our studio; it arrives in our signature package. A spa night.",
        "Spa Gift Set\nOur relaxation package: a candle, bath salts and a mask for your spa day.",
        # Courses and certificates that are things.
        "Visqueen Damp Proof Course, 450mm x 30m",
        "Mountain House Main Course\nFreeze-dried beef stroganoff, 2 servings.",
        "Crash Course in Python, 3rd Edition (Paperback)",
        "Diploma in Mahogany Frame\nHolds an A4 certificate.",
        "Swimming Level 2 Award Badge",
        "Golf  Course",
        "Gift-Certificate in Gold Envelope",
        "Course",
        "Dog Agility Obstacle Course",
        "Golf Course\nA print of the 18th hole, framed.",
        "Main Course Plate, porcelain, 28 cm",
        "Gift Certificate\nBook a treatment at our salon.",
        "Certificate in a Frame, A4, gold",
        "Of course\nA mug for the last word.",
    ],
)
def test_goods_are_not_a_service_offered(product):
    assert not offers_service(product)


def test_the_head_of_a_listing_that_names_its_product_first_is_its_first_word():
    assert product_first_head("Tablero Eléctrico Monofásico 12 Circuitos para la casa") == terms(
        "tablero"
    )[0]
    assert product_first_head("Cibo secco per gatti adulti al salmone, della casa") == terms("cibo")[0]
    assert product_first_head("Dog leash for the park, with a padded handle") is None
    # Articles and units before the noun are skipped; a first word in another script is none.
    assert product_first_head("Os óculos de sol para a praia") == terms("óculos")[0]
    assert product_first_head("5mm Tubo de cobre para la casa") == terms("tubo")[0]
    assert product_first_head("Телевизор Samsung para la casa de la playa") is None


@pytest.mark.parametrize(
    ("product", "noun"),
    [
        ("Sunset Coil\nThis sculptural ring is made of recycled silver.", "ring"),
        ("Crayfish\nSize: 5 cm. Lightweight and stylish earrings made from PLA.", "earrings"),
        ("Amber Nights\nOur hand-poured soy candles come in a glass jar.", "candles"),
        # The subject names no kind of goods.
        ("Nordic Sofa\nOur products are made to order in our factory.", None),
        # No description, or one that never says what the product is.
        ("Sunset Coil", None),
        ("Sunset Coil\nShips in two days. Gift wrapping on request.", None),
        # A listing that names its product first says it in its title.
        ("Florero de alambre para la casa de la playa\nThe vase is made of wire.", None),
        # Subjects that are not the product are passed over.
        ("Octopus\nOur products are made to order. This sofa features oak legs.", "sofa"),
        ("Sunset Coil\nThe chain is 18 inches long. Hand made with care.", None),
        ("Sunset Coil\n<p>This <strong>ring</strong> is made of silver.</p>", "ring"),
        # The subject's noun phrase ends before a preposition, not before "of";
        # its noun is its last word that is a term ("set" is a stop word).
        ("Octopus\nIt is the kind of seat that makes you stay.", "seat"),
        ("Octopus\nThis vibrant jersey set features the team's colours.", "jersey"),
        # A participle before the preposition is not the noun either.
        ("Octopus\nThis blanket woven from merino is warm.", "blanket"),
        # Praise, parts and adverbs are not the product.
        ("Dog Leash\nThis beauty is made of braided nylon rope.", None),
        ("Running Shoes\nThe sole is made from recycled rubber.", None),
        ("Mug\nLovingly made with stoneware clay in our studio.", None),
        ("Preserves\nJelly made from fresh berries.", "jelly"),
        # A participle is passed over only before a preposition.
        ("Statue\nThis plaster cast is heavy.", "cast"),
        (
            "Countryside Armchair\nStylish, this single-seater from Great Outdoor is sturdy.",
            "single-seater",
        ),
    ],
)
def test_the_description_says_what_the_product_is(product, noun):
    assert description_head(product) == (terms(noun)[-1] if noun else None)


def test_the_description_is_read_for_its_subject_only_near_its_start():
    late = "Sunset Coil\n" + "Shipping is free. " * 20 + "This ring is silver."
    assert description_head(late) is None


@pytest.mark.parametrize(
    ("product", "read"),
    [
        # A title of a design's name only reads with the noun its description gives.
        (
            "Computer mouse\nSize: 4 cm. Lightweight and stylish earrings made from PLA.",
            "Computer mouse earrings\nSize: 4 cm. Lightweight and stylish earrings made from PLA.",
        ),
        (
            "Lustre Tide\nA dance of light, the Lustre Tide ring is gold.",
            "Lustre Tide ring\nA dance of light, the Lustre Tide ring is gold.",
        ),
        # "the" or "our" with a word that is not the title's names a part of the
        # product, or a person.
        ("Chef Knife\nThe blade is forged from high-carbon steel.", None),
        ("Sourdough Bread\nOur loaves are baked at 4am every day.", None),
        # A title without terms names nothing that "the" subject could repeat.
        ("12345\nThe handle box is lovely.", None),
        # "this" and "these" point at the product, whatever space follows them.
        ("12345\nThese earrings are silver.", "12345 earrings\nThese earrings are silver."),
        ("Sunset Coil\nThis\nring is silver.", "Sunset Coil ring\nThis\nring is silver."),
        # The noun goes where the head noun is read: before "for", "(" or a comma.
        ("Gift for Dad\nThis wallet is leather.", "Gift wallet for Dad\nThis wallet is leather."),
        ("Tide (PLA)\nThese earrings are light.", "Tide earrings (PLA)\nThese earrings are light."),
        # The noun at a sentence's end, or between the design's name and a verb.
        (
            "Chrome Stack\nBold meets brutalist in this architectural statement ring. It is silver.",
            "Chrome Stack ring\nBold meets brutalist in this architectural statement ring. It is silver.",
        ),
        (
            "Fuchsia Flame\nBold and sculptural, the Fuchsia Flame ring blazes with character.",
            "Fuchsia Flame ring\nBold and sculptural, the Fuchsia Flame ring blazes with character.",
        ),
        # Not a phrase across a verb, a comma, a time, or a name before a noun.
        ("The GOAT LUT\nThis is the look.", None),
        ("Sea Mist\nCrafted from gold, this long, elegant piece glows.", None),
        ("Summer Days\nPerfect for this season.", None),
        ("Ocean Breeze\nHand-poured soy wax candle. Don't miss out on this deal!", None),
        ("Coral Bloom\nA wrap dress in linen. Complete this look.", None),
        # A thing named like the design is not the design ("the willow tree").
        ("Monarch\nThe monarch butterfly migrates; a pendant for its journey.", None),
        (
            "Willow\nSterling silver. The willow tree sways in this silver pendant.",
            "Willow pendant\nSterling silver. The willow tree sways in this silver pendant.",
        ),
        ("Half Arms\nSmooth skin with our Half Arms Laser Hair Removal package.", None),
        # A longer title names its product; the title holds the noun already; the
        # description says none.
        ("Golden Lace Cuff\nThis bracelet is gold-plated.", None),
        ("Choker Necklace\nThis choker is silver.", None),
        ("Computer mouse\nWireless, with a silent click.", None),
        ("Computer mouse", None),
    ],
)
def test_a_title_of_a_design_name_reads_with_the_noun_of_its_description(product, read):
    assert with_design_noun(product) == (read or product)
