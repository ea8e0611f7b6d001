/**
 * Section 2, the peer: pg-boss doing the work Cairn does per step. A step is
 * stored (send ~ create_research_plan), handed to one worker (fetch ~
 * get_next_step) and finished with its ~2 KB result (complete ~
 * submit_step_result). Each worker count gets its own queue; `workers` loops
 * first send their share of the jobs, then fetch + complete until the queue is
 * empty. Throughput counts both phases, the same way Cairn's counts plan creation.
 * A later pair at the same count (`pair`, bench/run.ts) gets a queue of its
 * own, so its jobs go to an empty partition rather than one holding the run
 * before's completed jobs (kept until pg-boss's maintenance, which the bench
 * does not run).
 */
import PgBoss from "pg-boss";
import { type HostShare, startHostClock } from "./support/host";
import { closedLoopCount, type LatencySummary, round, summarise, timed } from "./support/stats";
import { stepResult } from "./support/workload";

export type PeerRun = {
  workers: number;
  jobs: number;
  /** Jobs sent, fetched and completed per second over both phases. */
  stepsPerSecond: number;
  /** Fetched and completed per second, the send phase left out. */
  fetchCompletePerSecond: number;
  send: LatencySummary;
  fetch: LatencySummary;
  complete: LatencySummary;
  /** The host's steal over the timed run (bench/support/host.ts). */
  host?: HostShare;
};

export async function runPeer(
  url: string,
  levels: readonly number[],
  jobs: number,
  pair = 1,
): Promise<PeerRun[]> {
  // No `max`: pg-boss on its own default pool (node-postgres's 10), as
  // Cairn's loop runs on its server's: each library as it is deployed.
  const boss = new PgBoss({
    connectionString: url,
    // No cron or maintenance in the middle of a measurement: Cairn runs none either.
    supervise: false,
    schedule: false,
  });
  boss.on("error", (error) => console.error("pg-boss:", error));
  await boss.start();
  try {
    const runs: PeerRun[] = [];
    for (const workers of levels) {
      const queue = `bench-${workers}-${pair}`;
      await boss.createQueue(queue);
      const send: number[] = [];
      const fetch: number[] = [];
      const complete: number[] = [];
      const output = stepResult(0);
      const hostClock = startHostClock();
      const started = performance.now();
      await closedLoopCount(workers, jobs, async (worker, index) => {
        await timed(send, () => boss.send(queue, { worker, index, instructions: "Do the work." }));
      });
      const sent = performance.now();
      let done = 0;
      await Promise.all(
        Array.from({ length: workers }, async () => {
          for (;;) {
            const [job] = await timed(fetch, () => boss.fetch(queue));
            if (!job) return;
            await timed(complete, () => boss.complete(queue, job.id, output));
            done += 1;
          }
        }),
      );
      const finished = performance.now();
      const host = hostClock();
      if (done !== jobs) throw new Error(`pg-boss completed ${done} of ${jobs} jobs`);
      runs.push({
        workers,
        jobs: jobs,
        stepsPerSecond: round((jobs / (finished - started)) * 1000, 1),
        fetchCompletePerSecond: round((jobs / (finished - sent)) * 1000, 1),
        send: summarise(send),
        fetch: summarise(fetch),
        complete: summarise(complete),
        host,
      });
    }
    return runs;
  } finally {
    await boss.stop({ graceful: false, wait: true });
  }
}
