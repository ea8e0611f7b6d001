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
import { defineTool } from "../define-tool";

export const searchSourcesTool = defineTool({
  name: "search_sources",
  title: "Search the research library",
  description:
    'Search this account\'s stored research artifacts before researching anew (the prior-research check: search_sources({ query: "<key terms>", limit: 5 })) and during search steps. Hybrid ranking: full-text matching with English stemming ("recycled" finds "recycling") fused with typo-tolerant title matching ("recyling" finds "recycling"). Filter by planId, artifactType or since (ISO date). Returns { results: [...] }, best first, each with artifactId, title, a snippet with the matched terms in **bold**, the original researchQuestion, createdAt, score, planId and stepId; [] when nothing matches. Changes nothing, unless completesStep links the call to a paused server-run step, whose result it then becomes.',
  inputSchema: searchSourcesInput.extend({ completesStep: completesStepField }),
  outputSchema: withCompletedStepOutput(searchSourcesOutput),
  annotations: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
  run: withStepLink("search_sources", searchSources),
});
