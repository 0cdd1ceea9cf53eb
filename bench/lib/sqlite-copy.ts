import { closeSync, copyFileSync, fsyncSync, openSync, rmSync } from "node:fs";
import path from "node:path";

/**
 * A fresh copy of a template database for one side of one round, flushed to disk: the kernel writing the copy back
 * would otherwise fall into the timed work. Any WAL or shared-memory file of an earlier copy goes first.
 */
export function freshCopy(template: string, dir: string, name: string): string {
  const file = path.join(dir, `${name}.sqlite`);
  for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });
  copyFileSync(template, file);
  const fd = openSync(file, "r+");
  fsyncSync(fd);
  closeSync(fd);
  return file;
}
