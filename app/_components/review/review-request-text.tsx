/** The agent's summary and questions. */
export function ReviewRequestText({
  summary,
  questions,
}: {
  summary: string;
  questions: string[];
}) {
  return (
    <div className="review-summary">
      <h3>The agent's summary</h3>
      <p className="pre-wrap" data-testid="review-summary">
        {summary}
      </p>
      {questions.length > 0 ? (
        <>
          <h3>Questions</h3>
          <ul>
            {questions.map((question) => (
              <li key={question}>{question}</li>
            ))}
          </ul>
        </>
      ) : null}
    </div>
  );
}
