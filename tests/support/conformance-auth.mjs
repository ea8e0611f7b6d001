// Loaded with `node --import` into the MCP conformance suite, which has no auth
// flag: adds Cairn's API key to every request it sends to the server under test.
// The suite uses both fetch and undici's request(); both go through undici's
// global dispatcher, so the header is added there, with the suite's own undici.
import { realpathSync } from "node:fs";
import { createRequire } from "node:module";

const key = process.env.CAIRN_CONFORMANCE_KEY;
const port = process.env.CAIRN_CONFORMANCE_PORT;

function withAuthorization(headers) {
  const value = `Bearer ${key}`;
  if (Array.isArray(headers)) return [...headers, "authorization", value];
  if (headers && typeof headers[Symbol.iterator] === "function") {
    return [...[...headers].flat(), "authorization", value];
  }
  return { ...(headers ?? {}), authorization: value };
}

if (key && port && process.argv[1]) {
  const { Agent, setGlobalDispatcher } = createRequire(realpathSync(process.argv[1]))("undici");
  class AuthorizingAgent extends Agent {
    dispatch(options, handler) {
      const sameServer = new URL(String(options.origin)).port === port;
      const next = sameServer
        ? { ...options, headers: withAuthorization(options.headers) }
        : options;
      return super.dispatch(next, handler);
    }
  }
  setGlobalDispatcher(new AuthorizingAgent());
}
