import { config } from "~/config.server";
import { connect, setConnection, type Connection } from "~/db/connection.server";
import { migrateToLatest } from "~/db/migrations.server";
import { log } from "~/lib/log.server";
import { flushViews } from "~/services/share-views.server";
import { countUsers } from "~/models/users.server";
import { startHousekeeping } from "./housekeeping.server";
import { jobRegistry } from "./job-registry.server";
import { startRunner, type Runner } from "./jobs.server";
import { closeOcr } from "./ocr.server";
import { checkOcr } from "./ocr-pool.server";
import { warmProviders } from "./oidc.server";

export interface Services {
  connection: Connection;
  runner: Runner | null;
  /**
   * Stops background work and closes the database: no new jobs; running ones get `graceMs` to finish and are then
   * handed back for another worker (Runner.stop).
   */
  shutdown(opts?: { graceMs?: number }): Promise<void>;
}

/** Opens the database (migrating it), seeds the demo library on a fresh install, starts background work. */
export async function openDatabase(): Promise<Connection> {
  const cfg = config();
  // Behind a pooler in transaction mode, migrations and the runners' LISTEN session go to the database's direct
  // address (DATABASE_DIRECT_URL).
  const connection = connect(cfg.database, { direct: cfg.migrationDatabase });
  setConnection(connection);
  const direct = cfg.migrationDatabase && connect(cfg.migrationDatabase, { poolSize: 1 });
  const migrating = direct ?? connection;
  const applied = await migrateToLatest(migrating.db, migrating.dialect).finally(() => direct?.close());
  if (applied.length) log.info("migrations applied", { applied: applied.join(", ") });
  return connection;
}

export async function boot(opts: { runner?: boolean } = {}): Promise<Services> {
  const cfg = config();
  // A language without its data package fails the start, not every OCR job.
  if (cfg.ocr) checkOcr(cfg.ocr.languages);
  const connection = await openDatabase();
  if (cfg.demoSeed === "auto" && !cfg.production && (await countUsers()) === 0) {
    const { seedDemo } = await import("./demo.server");
    // The seed's report, a JSON log line per line of it (the CLI prints it as text).
    await seedDemo({ log: (text) => text.split("\n").forEach((line) => line.trim() && log.info(line.trim(), { demo: true })) });
  }
  // The console's company sign-in providers, read once now: the first pages' CSP names them (services/oidc.server.ts).
  await warmProviders();
  const runner = (opts.runner ?? cfg.jobRunner) ? startRunner(jobRegistry) : null;
  const stopHousekeeping = startHousekeeping();
  return {
    connection,
    runner,
    async shutdown({ graceMs }: { graceMs?: number } = {}) {
      stopHousekeeping();
      await runner?.stop({ graceMs });
      await closeOcr();
      await flushViews().catch(() => {});
      await connection.close();
      setConnection(undefined);
    },
  };
}
