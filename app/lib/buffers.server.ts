/**
 * Large decoded pictures, given back as soon as they are done with (docs/decisions/0027). A Buffer's memory lives
 * outside V8's heap, and V8 frees it only at a full collection, which it starts after tens of MiB of such memory
 * have piled up: the OCR job's decoded previews held the process's RSS about 20 MiB above what it needed (bench P14).
 */

/** The buffer's whole ArrayBuffer when it has one of its own; small buffers share a slab (Node's pool) and do not. */
export function ownArrayBuffer(buf: Uint8Array): ArrayBuffer | null {
  const whole = buf.buffer;
  return whole instanceof ArrayBuffer && buf.byteOffset === 0 && buf.byteLength === whole.byteLength ? whole : null;
}

type Transferable = ArrayBuffer & { transfer?: (length?: number) => ArrayBuffer };

/**
 * Gives a buffer's memory back now: its ArrayBuffer is detached (ES2024 `transfer`), so the buffer is empty from here
 * on, and nothing may still read it. Node's own memory is freed there and then; a native addon's (sharp's output) is
 * handed to the addon's finaliser, which runs on the event loop's next turn. A buffer that shares its ArrayBuffer is
 * left alone, and so is every buffer where `transfer` does not exist (Node.js 20): there the memory waits for the
 * collector, as before. Releasing one already released (or empty) does nothing.
 */
export function release(buf: Uint8Array): void {
  const whole = ownArrayBuffer(buf) as Transferable | null;
  if (whole && whole.byteLength > 0) whole.transfer?.(0);
}
