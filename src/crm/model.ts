/** The pipeline every new organization starts with (CONTRACT §10b). */
export const DEFAULT_STAGES = [
  { key: "new", name: "New", color: "#64748b", probability: 10, is_won: 0, is_lost: 0 },
  { key: "qualified", name: "Qualified", color: "#3b82f6", probability: 25, is_won: 0, is_lost: 0 },
  { key: "proposal", name: "Proposal", color: "#8b5cf6", probability: 50, is_won: 0, is_lost: 0 },
  { key: "negotiation", name: "Negotiation", color: "#f59e0b", probability: 75, is_won: 0, is_lost: 0 },
  { key: "won", name: "Won", color: "#22c55e", probability: 100, is_won: 1, is_lost: 0 },
  { key: "lost", name: "Lost", color: "#ef4444", probability: 0, is_won: 0, is_lost: 1 },
] as const;
