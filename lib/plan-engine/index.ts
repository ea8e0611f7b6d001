/**
 * The pure plan engine: state machines, review decisions, the branching
 * evaluator and progress predicates. It decides and never stores; see
 * docs/architecture.md.
 */
export * from "./app-error";
export * from "./audit-entries";
export * from "./bindings";
export * from "./branch-actions";
export * from "./cancel";
export * from "./checkpoint-guard";
export * from "./citations";
export * from "./claims";
export * from "./completion";
export * from "./conditions";
export * from "./decisions";
export * from "./evidence";
export * from "./fork";
export * from "./modify";
export * from "./modify-change";
export * from "./plan-snapshot";
export * from "./plan-status";
export * from "./progress";
export * from "./review-deadlines";
export * from "./review-decision";
export * from "./review-request";
export * from "./review-snooze";
export * from "./revisions";
export * from "./skill-executions";
export * from "./source-key";
export * from "./states";
export * from "./submit";
export * from "./transitions";
