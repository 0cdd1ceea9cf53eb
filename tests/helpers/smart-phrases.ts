/**
 * Smart-search phrases over the demo vocabulary (app/services/demo-vocabulary.ts), each with the tags a researcher
 * would accept: 12 in the tags' own words, 12 paraphrases in words that are not tags. The quality test scores the
 * answers; bench P5c times them.
 */
export const DIRECT: [string, string[]][] = [
  ["energy drink cans in a convenience store", ["energy drink", "can", "aluminium can", "convenience store"]],
  ["shoppers queuing at the checkout", ["shopper", "queuing", "queue", "checkout", "self checkout"]],
  ["price tags on the top shelf", ["price tag", "top shelf", "shelf", "shelf label"]],
  ["frozen pizza in the freezer", ["frozen pizza", "freezer"]],
  ["children eating ice cream at the beach", ["children", "child", "eating", "ice cream", "beach"]],
  ["craft beer promotion in a pub", ["craft beer", "beer", "promotion", "pub"]],
  ["oat milk cartons on a supermarket shelf", ["oat milk", "carton", "supermarket", "shelf", "milk"]],
  ["christmas gift sets in a department store", ["christmas", "gift set", "department store", "gift box"]],
  ["empty shelf out of stock", ["empty shelf", "out of stock", "shelf"]],
  ["cashier at the self checkout", ["cashier", "self checkout", "checkout", "cash register"]],
  ["coffee pods on sale", ["coffee pods", "coffee", "capsules", "sale", "discount"]],
  ["family shopping for breakfast cereal", ["family", "shopping", "breakfast cereal", "cereal"]],
];
export const PARAPHRASES: [string, string[]][] = [
  [
    "fizzy drinks in a grocery aisle",
    ["soda", "soft drink", "cola", "diet soda", "sparkling water", "tonic water", "grocery aisle", "aisle"],
  ],
  ["people waiting in line to pay", ["queue", "queuing", "paying", "checkout", "shopper", "customer", "cash register", "crowd"]],
  ["booze on the shelves", ["beer", "wine", "spirits", "whisky", "vodka", "gin", "rum", "lager", "cider", "craft beer", "shelf"]],
  ["kids with sweets", ["children", "child", "candy", "sweets", "chocolate", "chocolate bar"]],
  ["cheap store-brand products", ["private label", "budget", "value range", "discount store", "discount", "brand"]],
  ["washing up liquid and cleaning stuff", ["dish soap", "cleaning spray", "bleach", "laundry detergent", "washing powder"]],
  ["a worker refilling the coolers", ["staff", "shop assistant", "merchandiser", "restocking", "fridge", "chiller"]],
  ["mums buying nappies", ["mother", "nappies", "shopping", "baby", "baby wipes"]],
  [
    "salty snacks at the till",
    [
      "crisps",
      "potato chips",
      "pretzels",
      "nuts",
      "peanuts",
      "tortilla chips",
      "popcorn",
      "checkout",
      "cash register",
      "counter",
      "snack bag",
    ],
  ],
  ["automobile fuel station shop", ["petrol station", "convenience store", "car park"]],
  ["advertising outside the store", ["billboard", "poster", "signage", "banner", "storefront", "outdoor", "store entrance", "shop window"]],
  ["paying with a phone", ["mobile payment", "smartphone", "paying", "card payment"]],
];
