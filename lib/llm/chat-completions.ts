/**
 * The smallest client of an OpenAI-compatible chat-completions endpoint that
 * extract_data needs: one POST to `${baseUrl}/chat/completions` in JSON mode,
 * returning the first choice's text. Every failure becomes LLM_UPSTREAM_ERROR
 * with what the caller can do about it; the API key never appears in a message.
 */

import { readLimited } from "../http/read-limited";
import { AppError } from "../plan-engine/app-error";

export type ChatMessage = { role: "system" | "user" | "assistant"; content: string };

export type ChatEndpoint = { baseUrl: string; apiKey?: string | undefined; model: string };

/** Long enough for a large extraction by a slow model; two attempts still end within two minutes. */
export const CHAT_TIMEOUT_MS = 55_000;

/**
 * The most of a response Cairn reads (1 MB). An extraction from at most 100,000
 * characters of source is far smaller; a larger answer, from a confused or
 * hostile endpoint, would cost memory and then JSON parsing and schema
 * validation time on the server's one event loop.
 */
export const MAX_ANSWER_BYTES = 1_048_576;

function upstream(message: string, metadata: Record<string, unknown> = {}): AppError {
  return new AppError("LLM_UPSTREAM_ERROR", message, metadata);
}

export async function chatCompletion(
  endpoint: ChatEndpoint,
  messages: ChatMessage[],
  timeoutMs = CHAT_TIMEOUT_MS,
): Promise<string> {
  const url = `${endpoint.baseUrl.replace(/\/+$/, "")}/chat/completions`;
  let response: Response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        ...(endpoint.apiKey ? { Authorization: `Bearer ${endpoint.apiKey}` } : {}),
      },
      body: JSON.stringify({
        model: endpoint.model,
        messages,
        response_format: { type: "json_object" },
        temperature: 0,
      }),
      signal: AbortSignal.timeout(timeoutMs),
      cache: "no-store",
    });
  } catch (error) {
    const timedOut = error instanceof Error && error.name === "TimeoutError";
    throw upstream(
      timedOut
        ? `The language model at CAIRN_LLM_BASE_URL did not answer within ${timeoutMs / 1000} s. Try again with less text, or structure the data yourself.`
        : "The language model at CAIRN_LLM_BASE_URL could not be reached. Ask the operator to check CAIRN_LLM_BASE_URL, or structure the data yourself.",
      { reason: timedOut ? "timeout" : "unreachable" },
    );
  }

  let body: string | undefined;
  try {
    body = await readResponseLimited(response, MAX_ANSWER_BYTES);
  } catch (error) {
    const timedOut = error instanceof Error && error.name === "TimeoutError";
    throw upstream(
      timedOut
        ? `The language model at CAIRN_LLM_BASE_URL did not finish its answer within ${timeoutMs / 1000} s. Try again with less text, or structure the data yourself.`
        : "The language model's answer broke off. Try again later, or structure the data yourself.",
      { reason: timedOut ? "timeout" : "broken" },
    );
  }
  if (body === undefined) {
    throw upstream(
      `The language model's answer is larger than 1 MB (${MAX_ANSWER_BYTES} bytes), the most Cairn reads. Ask for fewer properties, extract from less text per call, or structure the data yourself.`,
      { reason: "too_large", limitBytes: MAX_ANSWER_BYTES },
    );
  }
  if (!response.ok) {
    // Providers put their reason in error.message; a short excerpt helps the operator.
    let reason = body.slice(0, 300);
    try {
      const parsed = JSON.parse(body) as { error?: { message?: unknown } };
      if (typeof parsed.error?.message === "string") reason = parsed.error.message.slice(0, 300);
    } catch {
      // not JSON: keep the raw excerpt
    }
    // Some providers echo the key they were sent; it must not reach the agent.
    if (endpoint.apiKey) reason = reason.replaceAll(endpoint.apiKey, "[redacted]");
    throw upstream(
      `The language model answered HTTP ${response.status}${reason ? `: ${reason}` : ""}. ${
        response.status === 401 || response.status === 403
          ? "Ask the operator to check CAIRN_LLM_API_KEY."
          : "Try again later, or structure the data yourself."
      }`,
      { status: response.status },
    );
  }

  let content: unknown;
  try {
    const parsed = JSON.parse(body) as { choices?: { message?: { content?: unknown } }[] };
    content = parsed.choices?.[0]?.message?.content;
  } catch {
    content = undefined;
  }
  if (typeof content !== "string") {
    throw upstream(
      "The language model's answer is not a chat-completions response (no choices[0].message.content). Check that CAIRN_LLM_BASE_URL points at an OpenAI-compatible API.",
    );
  }
  return content;
}

/** The response body as text, or undefined when it is larger than `maxBytes` (then left unread). */
async function readResponseLimited(
  response: Response,
  maxBytes: number,
): Promise<string | undefined> {
  const declared = Number(response.headers.get("content-length") ?? 0);
  if (declared > maxBytes) {
    await response.body?.cancel();
    return undefined;
  }
  return readLimited(response.body, maxBytes);
}
