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

// Loaded only into the suite's own process (never through NODE_OPTIONS), so a
// hook that cannot do its job stops the run with the reason instead of letting
// every scenario fail on a 401.
if (!key || !port || !process.argv[1]) {
  console.error(
    "conformance-auth: CAIRN_CONFORMANCE_KEY, CAIRN_CONFORMANCE_PORT and the suite's script are required",
  );
  process.exit(2);
}
const { Agent, setGlobalDispatcher } = createRequire(realpathSync(process.argv[1]))("undici");
class AuthorizingAgent extends Agent {
  dispatch(options, handler) {
    const sameServer = new URL(String(options.origin)).port === port;
    const next = sameServer ? { ...options, headers: withAuthorization(options.headers) } : options;
    return super.dispatch(next, handler);
  }
}
setGlobalDispatcher(new AuthorizingAgent());
