import pg from "pg";

/**
 * vitest global setup: drops the PostgreSQL schemas of integration runs whose process is gone (a killed run never
 * reaches its afterAll). Their names carry the pid (tests/helpers/db.ts), so a live run's schemas are left alone.
 */
export default async function dropStaleSchemas() {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) return;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>(
      "select schema_name as name from information_schema.schemata where schema_name like 't\\_%'",
    );
    for (const { name } of rows) {
      const pid = Number(/^t_(\d+)_/.exec(name)?.[1]);
      if (!pid || isAlive(pid)) continue;
      await client.query(`drop schema if exists "${name}" cascade`).catch(() => undefined);
    }
  } finally {
    await client.end();
  }
}

function isAlive(pid: number) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
