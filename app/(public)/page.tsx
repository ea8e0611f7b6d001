import Link from "next/link";

export default function HomePage() {
  return (
    <article className="prose">
      <h1>Research plans that survive the session</h1>
      <p className="lead">
        Cairn keeps an AI platform's research on course. Claude Code, ChatGPT or any MCP client
        writes a plan of typed steps with branching conditions, pulls one step at a time, submits
        what it found, and pauses for a person at checkpoints. The plan lives in Cairn, so work
        resumes from any session, and every change leaves an audit trail.
      </p>
      <section aria-labelledby="for-platforms">
        <h2 id="for-platforms">For AI platforms</h2>
        <p>
          Connect to the MCP endpoint at <code>/api/mcp</code> with an API key to create plans, get
          the next step, submit results, ask for review and resume.{" "}
          <Link href="/connect">How to connect</Link>.
        </p>
      </section>
      <section aria-labelledby="for-people">
        <h2 id="for-people">For researchers and admins</h2>
        <p>
          Watch plans progress, see stalled work, and answer checkpoints: approve, reject, modify
          with feedback, or skip. <Link href="/sign-in">Sign in</Link> to get started.
        </p>
      </section>
    </article>
  );
}
