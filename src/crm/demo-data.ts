/** Vocabulary and a seeded random source for realistic demo CRM data (`suite seed`, the bench). */

/** A small, fast, seeded PRNG (mulberry32): the same tenant name always gives the same data. */
export function randomSource(seedText: string) {
  let a = 0x9e3779b9;
  for (const ch of seedText) a = Math.imul(a ^ ch.charCodeAt(0), 0x85ebca6b) >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(list: readonly T[]): T => list[int(list.length)]!;
  /** Picks by weight: weights need not sum to 1. */
  const weighted = <T>(list: readonly T[], weights: readonly number[]): T => {
    const sum = weights.reduce((s, w) => s + w, 0);
    let r = next() * sum;
    for (let i = 0; i < list.length; i++) if ((r -= weights[i]!) < 0) return list[i]!;
    return list[list.length - 1]!;
  };
  return { next, int, pick, weighted };
}
export type RandomSource = ReturnType<typeof randomSource>;

export const FIRST_NAMES = [
  "Ada", "Alan", "Amara", "Andrés", "Anika", "Ben", "Björn", "Camille", "Carlos", "Chen", "Chloé", "Dara", "David", "Divya", "Elena",
  "Emeka", "Emma", "Farah", "Felix", "Freya", "Gabriel", "Grace", "Hana", "Hugo", "Ines", "Isaac", "Jamal", "Jana", "Jonas", "Julia",
  "Kai", "Keiko", "Lars", "Layla", "Leo", "Lina", "Lucas", "Maya", "Mateo", "Mei", "Mohammed", "Nadia", "Nina", "Noah", "Olga",
  "Omar", "Priya", "Rafael", "Rosa", "Sami", "Sara", "Sofia", "Tariq", "Tomás", "Uma", "Victor", "Wen", "Yara", "Yusuf", "Zoë",
] as const;

export const LAST_NAMES = [
  "Abara", "Almeida", "Andersson", "Bauer", "Becker", "Brennan", "Castillo", "Chowdhury", "Costa", "Dubois", "Eriksen", "Fischer",
  "Fontaine", "García", "Gupta", "Hansen", "Hoffmann", "Ibrahim", "Ivanova", "Jensen", "Kaur", "Kim", "Kowalski", "Larsen", "Lefèvre",
  "Lindqvist", "Martín", "Moreau", "Müller", "Nakamura", "Nguyen", "Novak", "Okafor", "Olsen", "Patel", "Pereira", "Quinn", "Rossi",
  "Sato", "Schmidt", "Silva", "Singh", "Søndergaard", "Tanaka", "Torres", "Uchida", "Varga", "Weber", "Wójcik", "Yamamoto", "Zhang",
] as const;

const SYLLABLES = ["ac", "al", "an", "ar", "bel", "bri", "cor", "dal", "den", "el", "fen", "gal", "hal", "is", "jun", "kel", "lor", "mar",
  "mer", "nor", "ol", "pel", "quin", "ral", "sol", "tam", "tor", "ul", "val", "ver", "wex", "xan", "yor", "zel", "qua", "vy", "zu", "ko"] as const;
const COMPANY_SUFFIXES = ["Inc", "GmbH", "Ltd", "SA", "Group", "Labs", "Systems", "Holdings", "Partners", "Co", "AB", "BV", "KK", "Oy"] as const;
export const INDUSTRIES = ["Software", "Manufacturing", "Retail", "Healthcare", "Finance", "Logistics", "Energy", "Education", "Media",
  "Hospitality", "Construction", "Telecom", "Agriculture", "Public sector"] as const;

/** A made-up company word ("Korvalis"): rare enough that searching one finds a few hundred deals. */
export function companyWord(r: RandomSource): string {
  const n = 2 + r.int(2);
  let w = "";
  for (let i = 0; i < n; i++) w += r.pick(SYLLABLES);
  return w[0]!.toUpperCase() + w.slice(1);
}

export const companyName = (r: RandomSource, word: string): string => `${word} ${r.pick(COMPANY_SUFFIXES)}`;

const DEAL_KINDS = ["Annual renewal", "Platform expansion", "Pilot project", "Enterprise license", "Support contract", "Consulting engagement",
  "Data migration", "Training program", "Integration services", "Seat upgrade", "Multi-year agreement", "Proof of concept",
  "Security review", "Hardware refresh", "Managed services", "Regional rollout"] as const;
const QUARTERS = ["Q1", "Q2", "Q3", "Q4"] as const;
const NOTES = ["Decision maker is the CFO; procurement wants three quotes.", "Champion moved teams, need a new sponsor.",
  "Asked for a discount on the second year.", "Legal review of the DPA in progress.", "Competitor demo scheduled next week.",
  "Budget approved, waiting on signature.", "Requested an on-site workshop.", "Renewal at risk: support tickets up this quarter.",
  "Wants SSO and audit logs before signing.", "Follow up after the board meeting.", "Pricing sent; they compare with the incumbent.",
  "Technical evaluation passed.", "Intro via partner referral.", "Needs a reference customer in the same industry."] as const;

export const dealTitle = (r: RandomSource, accountWord: string): string => `${r.pick(DEAL_KINDS)} ${accountWord} ${r.pick(QUARTERS)}`;
export const dealNotes = (r: RandomSource): string => r.pick(NOTES);

/** Cents spread over several orders of magnitude: $50 to $5M, log-uniform. */
export const dealValueCents = (r: RandomSource): number => Math.round(10 ** (3.7 + r.next() * 5)) * 100 + r.int(100);

/** Skewed like a real pipeline: most deals are early, few are won or lost. */
export const STAGE_WEIGHTS: Record<string, number> = { new: 34, qualified: 22, proposal: 15, negotiation: 10, won: 11, lost: 8 };
