import { db } from "~/db/connection.server";
import { projectScope } from "~/models/scope.server";
import { makeProject, makeUser } from "./fixtures";
import { sessionCookie } from "./server";

/**
 * The people of a media access test: an editor with a project (and its scope, to add images to) and a member of
 * another project, each with a session cookie.
 */
export async function memberAndStranger() {
  const editor = await makeUser();
  const other = await makeUser();
  const project = await makeProject([{ actor: editor.actor }]);
  await makeProject([{ actor: other.actor }]);
  return {
    editor,
    project,
    scope: await projectScope(editor.actor, project.id),
    cookie: await sessionCookie(editor.user.id),
    stranger: await sessionCookie(other.user.id),
  };
}

/** An image's stored keys and their /media URLs (a key's `/` written as `~`). */
export async function mediaOf(imageId: number) {
  const keys = await db()
    .selectFrom("images")
    .select(["thumb_key", "preview_key", "storage_key"])
    .where("id", "=", imageId)
    .executeTakeFirstOrThrow();
  const at = (key: string) => `/media/${imageId}/${key.replaceAll("/", "~")}`;
  return { keys, thumb: at(keys.thumb_key), preview: at(keys.preview_key), original: at(keys.storage_key) };
}
