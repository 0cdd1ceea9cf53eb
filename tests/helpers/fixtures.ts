import { createUser } from "~/models/users.server";
import { addMember, createProject } from "~/models/projects.server";
import type { Actor } from "~/models/actor";
import { insertImageRows, type StoredImageFile } from "~/models/images.server";
import type { ProjectScope } from "~/models/scope.server";
import { claimObjects } from "~/models/objects.server";

let n = 0;
export async function makeUser(
  role: "user" | "admin" = "user",
  extra: Parameters<typeof createUser>[0] extends infer T ? Partial<T> : never = {},
) {
  n += 1;
  const user = await createUser({
    email: `user${n}-${Date.now()}@example.com`,
    name: "Test",
    surname: `User${n}`,
    role,
    status: "active",
    terms_acknowledged_at: Date.now(),
    ...extra,
  });
  return { user, actor: { id: user.id, role: user.role } as Actor };
}

export async function makeProject(members: { actor: Actor; role?: "viewer" | "editor" | "manager" }[] = []) {
  n += 1;
  const project = await createProject({ name: `Project ${n} ${Math.random().toString(36).slice(2, 6)}` });
  for (const m of members) await addMember(project.id, m.actor.id, m.role ?? "editor");
  return project;
}

/** Image-row metadata for model tests that do not need real files. */
export function fakeFile(i = 0): StoredImageFile {
  const hash = i.toString(16).padStart(64, "0");
  return {
    storageKey: `originals/${hash.slice(0, 2)}/${hash.slice(2, 4)}/${hash}.jpg`,
    thumbKey: `thumbs/${hash.slice(0, 2)}/${hash.slice(2, 4)}/${hash}.webp`,
    previewKey: `previews/${hash.slice(0, 2)}/${hash.slice(2, 4)}/${hash}.webp`,
    mimeType: "image/jpeg",
    sizeBytes: 1000,
    width: 10,
    height: 10,
    checksum: hash,
  };
}

export const meta = (title: string, keywords: string[] = [], ocrText = "") => ({
  title,
  description: `About ${title}`,
  keywords,
  ocrText,
  originalName: `${title}.jpg`,
});

/** A fake file whose objects are recorded as stored (no bytes), so a model write that checks them can commit. */
export async function storedFakeFile(i = 0): Promise<StoredImageFile> {
  const file = fakeFile(i);
  await claimObjects(file.checksum, [file.storageKey, file.thumbKey, file.previewKey]);
  return file;
}

/**
 * `count` metadata-only images in a project, in chunks of 1,000: `fakeFile(first + i)`, titled by `title(i)`, made
 * a second apart from `at` (the newest last).
 */
export async function insertManyImages(
  scope: ProjectScope,
  count: number,
  opts: { first: number; title: (i: number) => string; at?: number },
) {
  for (let i = 0; i < count; i += 1000)
    await insertImageRows(
      scope,
      Array.from({ length: Math.min(1000, count - i) }, (_, k) => ({
        file: fakeFile(opts.first + i + k),
        meta: meta(opts.title(i + k)),
        at: (opts.at ?? 1_700_000_000_000) + i + k,
      })),
    );
}
