import {
  completesStepField,
  withCompletedStepOutput,
  withStepLink,
} from "../../services/plans/complete-linked-step";
import {
  searchSources,
  searchSourcesInput,
  searchSourcesOutput,
} from "../../services/research/search-sources";
import { annotations, defineTool } from "../define-tool";

export const searchSourcesTool = defineTool({
  name: "search_sources",
  title: "Search the research library",
  description:
    "Search this account's research library: the prior-research check ({ query, limit: 5 }) and search steps. Full-text and typo-tolerant title matches, best first. Changes nothing, unless completesStep is given.",
  inputSchema: searchSourcesInput.extend({ completesStep: completesStepField }),
  outputSchema: withCompletedStepOutput(searchSourcesOutput),
  annotations: annotations({ idempotent: true }),
  run: withStepLink("search_sources", searchSources),
});
