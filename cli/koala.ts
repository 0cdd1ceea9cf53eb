/**
 * The Koala command line: `npm run koala -- <command> [options]`. Run `npm run koala -- --help`.
 * It works on the database and storage the environment configures (the same variables as the server).
 */
import { readFile, readdir } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { config } from "~/config.server";
import { hashPassword } from "~/lib/crypto.server";
import { newTotpSecret, otpauthUri, totpCode } from "~/lib/totp.server";
import { SYSTEM } from "~/models/actor";
import { projectsKeepingNoPositions, queuePositionRemoval } from "~/models/image-positions.server";
import { projectScope } from "~/models/scope.server";
import { addMember, createProject, findProjectByName } from "~/models/projects.server";
import { createUser, findUserByEmail, setTotpSecret } from "~/models/users.server";
import { openDatabase } from "~/services/boot.server";
import { seedDemo, seedLargeProject } from "~/services/demo.server";
import { ImageRejected } from "~/services/image-files.server";
import { addImageFile } from "~/services/ingest.server";
import { jobRegistry } from "~/services/job-registry.server";
import { startRunner } from "~/services/jobs.server";
import { readSidecar, type SidecarEntry } from "./sidecar";

const HELP = `Usage: npm run koala -- <command> [options]

Commands:
  migrate                              Apply database migrations.
  create-user --email E --name N --surname S [--admin] [--password P] [--totp]
                                       Create an active user. --totp enrols TOTP and prints the otpauth URI.
  create-project --name N [--wsc]      Create a project (a "client").
  add-member --project N --email E [--role viewer|editor|manager]
                                       Add a user to a project (default role: editor).
  import --project N --dir D [--sidecar F.csv|F.json] [--as E]
                                       Import a folder of images into a project. The sidecar holds
                                       file, title, description, keywords (comma-separated), ocr.
  seed-demo [--images N]               Create the demo library (skipped when present).
  seed-large [--count N] [--name N]    Add a large metadata-only project (default 100000 images).
  enrol-totp --email E                 Enrol (or replace) a user's TOTP secret and print the otpauth URI.
  totp-code --email E                  Print a user's current TOTP code (not in production).
  remove-positions [--project N]       Queue taking camera positions out of the stored originals of a project,
                                       or of every project, that keeps none (migration 028 did it once on
                                       upgrading; again after restoring objects from a backup, say).
  worker                               Run background jobs until stopped (for extra worker processes).
  --help                               This text.
`;

type Opts = Record<string, string | boolean | undefined>;

function need(opts: Opts, name: string): string {
  const v = opts[name];
  if (typeof v !== "string" || !v.trim()) throw new Error(`--${name} is required`);
  return v.trim();
}

async function main(argv: string[]) {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      help: { type: "boolean", short: "h" },
      email: { type: "string" },
      name: { type: "string" },
      surname: { type: "string" },
      password: { type: "string" },
      admin: { type: "boolean" },
      totp: { type: "boolean" },
      wsc: { type: "boolean" },
      project: { type: "string" },
      role: { type: "string" },
      dir: { type: "string" },
      sidecar: { type: "string" },
      as: { type: "string" },
      images: { type: "string" },
      count: { type: "string" },
    },
  });
  const command = positionals[0];
  if (values.help || !command) {
    process.stdout.write(HELP);
    return;
  }
  const connection = await openDatabase();
  try {
    await run(command, values);
  } finally {
    await connection.close();
  }
}

async function run(command: string, opts: Opts) {
  const out = (line: string) => process.stdout.write(line + "\n");
  switch (command) {
    case "migrate":
      out("Database is up to date.");
      return;
    case "create-user": {
      const email = need(opts, "email");
      if (await findUserByEmail(email)) throw new Error(`A user with ${email} exists already`);
      const password = typeof opts.password === "string" ? opts.password : undefined;
      const secret = opts.totp ? newTotpSecret() : null;
      const user = await createUser({
        email,
        name: need(opts, "name"),
        surname: need(opts, "surname"),
        role: opts.admin ? "admin" : "user",
        status: "active",
        password_hash: password ? await hashPassword(password) : null,
        totp_secret: secret,
      });
      out(`Created ${user.role} ${user.email} (id ${user.id}).`);
      if (secret) out(`TOTP secret: ${secret}\notpauth URI: ${otpauthUri(secret, user.email)}`);
      if (password && !secret) out("Note: password sign-in needs TOTP too; add --totp to enrol it.");
      return;
    }
    case "create-project": {
      const project = await createProject({ name: need(opts, "name"), wsc: Boolean(opts.wsc) });
      out(`Created project "${project.name}" (id ${project.id}).`);
      return;
    }
    case "add-member": {
      const project = await projectByName(need(opts, "project"));
      const user = await userByEmail(need(opts, "email"));
      const role = (opts.role as string | undefined) ?? "editor";
      if (!["viewer", "editor", "manager"].includes(role)) throw new Error("--role must be viewer, editor or manager");
      await addMember(project.id, user.id, role as "viewer" | "editor" | "manager");
      out(`${user.email} is now ${role} of "${project.name}".`);
      return;
    }
    case "import":
      await importFolder(opts, out);
      return;
    case "seed-demo":
      await seedDemo({ imagesPerProject: opts.images ? Number(opts.images) : undefined, log: out });
      return;
    case "seed-large":
      await seedLargeProject({ count: opts.count ? Number(opts.count) : undefined, name: opts.name as string | undefined, log: out });
      return;
    case "totp-code": {
      if (config().production) throw new Error("totp-code is not available in production");
      const user = await userByEmail(need(opts, "email"));
      if (!user.totp_secret) throw new Error(`${user.email} has no TOTP enrolled`);
      out(totpCode(user.totp_secret));
      return;
    }
    case "enrol-totp": {
      const user = await userByEmail(need(opts, "email"));
      const secret = newTotpSecret();
      await setTotpSecret(user.id, secret);
      out(`TOTP secret: ${secret}\notpauth URI: ${otpauthUri(secret, user.email)}`);
      return;
    }
    case "remove-positions": {
      let ids = await projectsKeepingNoPositions();
      if (opts.project !== undefined) {
        const project = await projectByName(need(opts, "project"));
        if (!ids.includes(project.id)) throw new Error(`"${project.name}" keeps positions; a manager turns that off on its edit page`);
        ids = [project.id];
      }
      for (const id of ids) await queuePositionRemoval(id);
      out(`Queued for ${ids.length} project(s); a running Koala or \`koala worker\` does the work in the background.`);
      return;
    }
    case "worker": {
      const runner = startRunner(jobRegistry, { concurrency: 4 });
      out("Worker running; stop with Ctrl-C.");
      await new Promise<void>((resolve) => {
        process.once("SIGINT", resolve);
        process.once("SIGTERM", resolve);
      });
      await runner.stop();
      return;
    }
    default:
      throw new Error(`Unknown command "${command}". See --help.`);
  }
}

async function projectByName(name: string) {
  const project = await findProjectByName(name);
  if (!project) throw new Error(`No project named "${name}"`);
  return project;
}
async function userByEmail(email: string) {
  const user = await findUserByEmail(email);
  if (!user) throw new Error(`No user with e-mail ${email}`);
  return user;
}

const IMAGE_EXT = /\.(jpe?g|png|webp|gif|tiff?|avif|heic|heif)$/i;

async function importFolder(opts: Opts, out: (l: string) => void) {
  const project = await projectByName(need(opts, "project"));
  const dir = path.resolve(need(opts, "dir"));
  // Imports act as a member (an admin by default): the model checks the right to edit.
  const actorUser = typeof opts.as === "string" ? await userByEmail(opts.as) : undefined;
  const actor = actorUser ? { id: actorUser.id, role: actorUser.role } : SYSTEM;
  const scope = await projectScope(actor, project.id);
  const sidecar: Map<string, SidecarEntry> = opts.sidecar ? await readSidecar(path.resolve(opts.sidecar as string)) : new Map();
  const files = (await readdir(dir)).filter((f) => IMAGE_EXT.test(f)).sort();
  let imported = 0;
  let refused = 0;
  for (const file of files) {
    const meta = sidecar.get(file);
    try {
      await addImageFile(scope, await readFile(path.join(dir, file)), {
        title: meta?.title ?? path.parse(file).name,
        description: meta?.description ?? "",
        keywords: meta?.keywords ?? [],
        ocrText: meta?.ocr ?? "",
        originalName: file,
      });
      imported += 1;
    } catch (err) {
      if (!(err instanceof ImageRejected)) throw err;
      refused += 1;
      out(`  skipped ${file}: ${err.message}`);
    }
  }
  out(`Imported ${imported} image(s) into "${project.name}"${refused ? `, skipped ${refused}` : ""}.`);
}

main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`koala: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
