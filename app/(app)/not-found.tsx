import Link from "next/link";

export default function NotFound() {
  return (
    <section className="narrow">
      <h1>Not found</h1>
      <p>
        There is nothing here for your account. It may belong to another team, or never have
        existed.
      </p>
      <p>
        <Link href="/plans">Back to the plans</Link>
      </p>
    </section>
  );
}
