/**
 * Bindings between steps, and why a server-run step cannot run: the pure half
 * of server-run steps (docs/protocol.md, "Server-run steps").
 *
 * A string value of exactly `{{steps.N.result.<path>}}` (N a step order) or
 * `{{plan.researchQuestion}}` is replaced by that value, keeping its type;
 * inside longer text each binding is interpolated as text (JSON for objects).
 * Paths are dot-separated keys or array indexes; they never reach prototype
 * members.
 */
import { AppError } from "./app-error";
import type { StepStatus } from "./states";

/** Deepest path a binding may follow, and the most bindings one step may hold. */
export const MAX_BINDING_PATH_SEGMENTS = 16;
export const MAX_BINDINGS_PER_STEP = 50;
/** Largest resolved arguments or inputs of one step, as JSON. */
export const MAX_RESOLVED_BYTES = 200_000;

export type Binding =
  | { kind: "step"; stepOrder: number; path: string[]; text: string }
  | { kind: "researchQuestion"; text: string };

// One repetition, which no brace can end: linear in the text. Spaces around
// the inner text are trimmed in code; the patterns \s*([^{}]*?)\s* they
// replace split a run of spaces every way (cubic: 1,000 spaces after "{{"
// took 0.5 s of the event loop, 5,000 about a minute).
const BINDING = /\{\{([^{}]*)\}\}/g;
const EXACT = /^\{\{([^{}]*)\}\}$/;
const FORBIDDEN = new Set(["__proto__", "prototype", "constructor"]);

function parseBinding(spaced: string, text: string): Binding | string {
  const inner = spaced.trim();
  if (inner === "plan.researchQuestion") return { kind: "researchQuestion", text };
  const match = /^steps\.(\d{1,4})\.result((?:\.[A-Za-z0-9_$-]+)*)$/.exec(inner);
  if (!match) {
    return `"${text}" is not a binding: use {{steps.N.result.<path>}} or {{plan.researchQuestion}}`;
  }
  const path = (match[2] ?? "").split(".").filter(Boolean);
  if (path.length > MAX_BINDING_PATH_SEGMENTS) {
    return `"${text}" follows ${path.length} keys; at most ${MAX_BINDING_PATH_SEGMENTS}`;
  }
  const forbidden = path.find((segment) => FORBIDDEN.has(segment));
  if (forbidden) return `"${text}" names "${forbidden}", which a binding may not follow`;
  return { kind: "step", stepOrder: Number(match[1]), path, text };
}

/** Every binding in a value (any depth), or the reasons some are malformed. */
export function findBindings(value: unknown): { bindings: Binding[]; errors: string[] } {
  const bindings: Binding[] = [];
  const errors: string[] = [];
  // Every depth, as resolveBindings and renumberBindings walk (input is at most
  // 100 levels deep): a binding nested deeper than this walk went was resolved
  // but never checked nor counted.
  const walk = (node: unknown) => {
    if (typeof node === "string") {
      for (const match of node.matchAll(BINDING)) {
        const parsed = parseBinding(match[1] ?? "", match[0]);
        if (typeof parsed === "string") errors.push(parsed);
        else bindings.push(parsed);
      }
    } else if (Array.isArray(node)) {
      for (const item of node) walk(item);
    } else if (node !== null && typeof node === "object") {
      for (const item of Object.values(node)) walk(item);
    }
  };
  walk(value);
  return { bindings, errors };
}

/** Whether a string is one whole binding (its value keeps its type). */
export function isWholeBinding(value: unknown): boolean {
  return typeof value === "string" && EXACT.test(value);
}

/**
 * Creation-time check of one step's bindings: each names a step that comes
 * earlier in the plan. Throws INVALID_STEP_REFERENCE or VALIDATION_ERROR with
 * the step and field in the message.
 */
export function validateBindings(stepOrder: number, field: string, value: unknown): void {
  const { bindings, errors } = findBindings(value);
  const label = `steps[${stepOrder - 1}].${field}`;
  if (errors.length > 0) {
    throw new AppError("VALIDATION_ERROR", `${label}: ${errors[0]}.`, { field: label });
  }
  if (bindings.length > MAX_BINDINGS_PER_STEP) {
    throw new AppError(
      "VALIDATION_ERROR",
      `${label} holds ${bindings.length} bindings; at most ${MAX_BINDINGS_PER_STEP}.`,
      { field: label },
    );
  }
  for (const binding of bindings) {
    if (binding.kind === "step" && (binding.stepOrder < 1 || binding.stepOrder >= stepOrder)) {
      throw new AppError(
        "INVALID_STEP_REFERENCE",
        `${label}: ${binding.text} names step ${binding.stepOrder}, which is not earlier than step ${stepOrder}; a binding can only read the result of an earlier step.`,
        { field: label, stepOrder: binding.stepOrder },
      );
    }
  }
}

export type BindingSource = {
  researchQuestion: string;
  /** The plan's steps by order: their status and stored result. */
  steps: ReadonlyMap<
    number,
    { stepId: string; status: StepStatus; result: unknown; tool: string | null }
  >;
};

export type Unresolved = {
  binding: string;
  /** Why: the producing step has not finished, failed or was skipped, or lacks the path. */
  reason: "not_completed" | "failed" | "skipped" | "missing_path" | "no_such_step";
  producingStepOrder: number | null;
};

function follow(root: unknown, path: readonly string[]): { found: boolean; value: unknown } {
  let node = root;
  for (const segment of path) {
    if (node === null || typeof node !== "object" || !Object.hasOwn(node, segment)) {
      return { found: false, value: undefined };
    }
    node = (node as Record<string, unknown>)[segment];
  }
  return { found: true, value: node };
}

function bindingValue(binding: Binding, source: BindingSource): { value: unknown } | Unresolved {
  if (binding.kind === "researchQuestion") return { value: source.researchQuestion };
  const step = source.steps.get(binding.stepOrder);
  const base = { binding: binding.text, producingStepOrder: binding.stepOrder };
  if (!step) return { ...base, reason: "no_such_step" };
  if (step.status === "failed") return { ...base, reason: "failed" };
  if (step.status === "skipped") return { ...base, reason: "skipped" };
  if (step.status !== "completed") return { ...base, reason: "not_completed" };
  const found = follow(step.result, binding.path);
  return found.found ? { value: found.value } : { ...base, reason: "missing_path" };
}

const asText = (value: unknown) =>
  typeof value === "string" ? value : value === undefined ? "" : JSON.stringify(value);

/** Replaces every binding in `value`; lists the ones that cannot be resolved yet. */
export function resolveBindings(
  value: unknown,
  source: BindingSource,
): { value: unknown; unresolved: Unresolved[] } {
  const unresolved: Unresolved[] = [];
  const resolveOne = (binding: Binding) => {
    const answer = bindingValue(binding, source);
    if ("reason" in answer) {
      unresolved.push(answer);
      return undefined;
    }
    return answer.value;
  };
  const walk = (node: unknown): unknown => {
    if (typeof node === "string") {
      const exact = EXACT.exec(node);
      if (exact) {
        const parsed = parseBinding(exact[1] ?? "", node);
        return typeof parsed === "string" ? node : resolveOne(parsed);
      }
      return node.replace(BINDING, (text, inner: string) => {
        const parsed = parseBinding(inner, text);
        return typeof parsed === "string" ? text : asText(resolveOne(parsed));
      });
    }
    if (Array.isArray(node)) return node.map(walk);
    if (node !== null && typeof node === "object") {
      return Object.fromEntries(Object.entries(node).map(([key, item]) => [key, walk(item)]));
    }
    return node;
  };
  const resolved = walk(value);
  return { value: resolved, unresolved };
}

export const PAUSE_KINDS = [
  "unresolvable_params",
  "schema_mismatch",
  "tool_error",
  "unresolved_dependency",
] as const;
export type PauseKind = (typeof PAUSE_KINDS)[number];

export type PauseReason = {
  type: PauseKind;
  stepId: string;
  stepOrder: number;
  tool: string;
  /** In plain words, for the agent and the plan page. */
  message: string;
  /** unresolvable_params / unresolved_dependency: the bindings or fields that are missing. */
  missing?: string[];
  /** unresolved_dependency: the step whose output is missing. */
  producingStepOrder?: number;
  /** schema_mismatch: the failing fields and what they expect. */
  issues?: { path: string; message: string }[];
  /** tool_error: the error's code and whether calling again may help. */
  errorCode?: string;
  retryable?: boolean;
  /** The call that unblocks the plan, with the arguments resolved as far as they could be. */
  suggestedTool: { name: string; arguments: Record<string, unknown> };
};

/**
 * Why a server step could not run because of its bindings: a binding on a
 * failed or skipped step is `unresolved_dependency` (the plan cannot produce
 * that output any more); anything else (a path the result lacks, a step not
 * done yet) is `unresolvable_params`. Either way the suggested call is the
 * step's own tool with what could be resolved, linked to the step, so the
 * agent fills in only what is missing.
 */
export function classifyUnresolved(
  step: { stepId: string; stepOrder: number; tool: string },
  planId: string,
  partial: Record<string, unknown>,
  unresolved: readonly Unresolved[],
): PauseReason {
  const dead = unresolved.find((u) => u.reason === "failed" || u.reason === "skipped");
  const suggestedTool = {
    name: step.tool,
    arguments: { ...partial, completesStep: { planId, stepId: step.stepId } },
  };
  if (dead) {
    return {
      type: "unresolved_dependency",
      stepId: step.stepId,
      stepOrder: step.stepOrder,
      tool: step.tool,
      missing: unresolved.map((u) => u.binding),
      producingStepOrder: dead.producingStepOrder ?? undefined,
      message: `Step ${step.stepOrder} (${step.tool}) needs ${dead.binding}, but step ${dead.producingStepOrder} was ${dead.reason}, so that output will never exist. Call ${step.tool} yourself with the missing arguments (completesStep links the result to the step), or submit_step_result for step ${step.stepOrder}.`,
      suggestedTool,
    };
  }
  return {
    type: "unresolvable_params",
    stepId: step.stepId,
    stepOrder: step.stepOrder,
    tool: step.tool,
    missing: unresolved.map((u) => u.binding),
    message: `Step ${step.stepOrder} (${step.tool}) cannot resolve ${unresolved.map((u) => u.binding).join(", ")}: ${unresolved.map((u) => (u.reason === "missing_path" ? `step ${u.producingStepOrder}'s result has no such field` : `step ${u.producingStepOrder} has no result yet`)).join("; ")}. Call ${step.tool} yourself with the missing arguments (completesStep links the result to the step), or submit_step_result for step ${step.stepOrder}.`,
    suggestedTool,
  };
}

/**
 * A value's bindings renumbered after steps moved: `orderOf(old)` is a step's
 * new order, or undefined when it was removed (then the answer names the
 * first binding that lost its step).
 */
export function renumberBindings(
  value: unknown,
  orderOf: (oldOrder: number) => number | undefined,
): { value: unknown; lost: string | null; changed: boolean } {
  let lost: string | null = null;
  let changed = false;
  const rewrite = (text: string) =>
    text.replace(BINDING, (whole, inner: string) => {
      const parsed = parseBinding(inner, whole);
      if (typeof parsed === "string" || parsed.kind !== "step") return whole;
      const order = orderOf(parsed.stepOrder);
      if (order === undefined) {
        lost ??= whole;
        return whole;
      }
      if (order !== parsed.stepOrder) changed = true;
      return `{{steps.${order}.result${parsed.path.map((p) => `.${p}`).join("")}}}`;
    });
  const walk = (node: unknown): unknown => {
    if (typeof node === "string") return rewrite(node);
    if (Array.isArray(node)) return node.map(walk);
    if (node !== null && typeof node === "object") {
      return Object.fromEntries(Object.entries(node).map(([key, item]) => [key, walk(item)]));
    }
    return node;
  };
  const renumbered = walk(value);
  return { value: renumbered, lost, changed };
}
