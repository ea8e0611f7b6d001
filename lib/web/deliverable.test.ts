import { describe, expect, it } from "vitest";
import { downloadFileName, isAllowedImageSource, rendersAsMarkdown } from "./deliverable";

describe("isAllowedImageSource", () => {
  const origin = "http://127.0.0.1:3000";

  it("shows data: images and images on the page's own origin", () => {
    expect(isAllowedImageSource("data:image/png;base64,iVBORw0KGgo=", origin)).toBe(true);
    expect(isAllowedImageSource("/skills/chart.png", origin)).toBe(true);
    expect(isAllowedImageSource("chart.png", origin)).toBe(true);
    expect(isAllowedImageSource("http://127.0.0.1:3000/a.png", origin)).toBe(true);
  });

  it("drops every other host, scheme and form", () => {
    for (const src of [
      "https://tracker.example.com/pixel.gif",
      "//tracker.example.com/pixel.gif",
      "http://127.0.0.1:3001/a.png",
      "https://127.0.0.1:3000/a.png",
      "javascript:alert(1)",
      "data:text/html,<script>alert(1)</script>",
      "",
      "  ",
      undefined,
    ]) {
      expect(isAllowedImageSource(src, origin), String(src)).toBe(false);
    }
  });

  it("allows only relative sources when the page's origin is unknown", () => {
    expect(isAllowedImageSource("/a.png", null)).toBe(true);
    expect(isAllowedImageSource("http://127.0.0.1:3000/a.png", null)).toBe(false);
  });
});

/** A Markdown download's name: the base, then the extension `md`. */
const markdownFile = (base: string) => `${base}.md`;

describe("downloadFileName", () => {
  it("keeps the plan's name in safe characters, at most 80, with the format's extension", () => {
    expect(downloadFileName("Coffee & sleep: a review", "markdown")).toBe(
      markdownFile("Coffee-sleep-a-review"),
    );
    expect(downloadFileName("x".repeat(100), "application/json")).toBe(`${"x".repeat(80)}.json`);
    expect(downloadFileName("???", "text/plain")).toBe(markdownFile("deliverable"));
    expect(downloadFileName("", "csv")).toBe("deliverable.csv");
    expect(downloadFileName("[Inspector] Heat pump adoption", "comparison_table")).toBe(
      markdownFile("Inspector-Heat-pump-adoption"),
    );
  });
});

describe("rendersAsMarkdown", () => {
  it("renders every text form the output skill names, and any other text, as Markdown", () => {
    for (const form of [
      "markdown_report",
      "executive_summary",
      "comparison_table",
      "slide_outline",
      "email",
      "chat_answer",
      "text/markdown",
      "text/plain",
      "memo",
    ]) {
      expect(rendersAsMarkdown(form), form).toBe(true);
    }
    for (const data of ["json", "application/json", "csv", "text/csv", "xml", "yaml"]) {
      expect(rendersAsMarkdown(data), data).toBe(false);
    }
  });
});
