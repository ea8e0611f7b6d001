"use client";

export default function AppError({ reset }: { error: Error; reset: () => void }) {
  return (
    <section className="narrow" role="alert">
      <h1>Something went wrong</h1>
      <p>
        Cairn could not show this page. Nothing you did was lost: try again, and if it keeps
        failing, check that the server can reach its database.
      </p>
      <button type="button" className="button" onClick={reset}>
        Try again
      </button>
    </section>
  );
}
