import { useEffect, useRef, type RefObject } from "react";

/**
 * Every menu is a <details> disclosure: it opens with Enter or Space and works without JavaScript. With
 * JavaScript, Escape closes it (focus back on its summary) and so does a click outside it.
 */
export function useDismissable(ref: RefObject<HTMLDetailsElement | null>) {
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape" && el.open) {
        el.open = false;
        el.querySelector("summary")?.focus();
      }
    };
    const onClick = (e: MouseEvent) => {
      if (el.open && !el.contains(e.target as Node)) el.open = false;
    };
    document.addEventListener("keydown", onKey);
    document.addEventListener("click", onClick);
    return () => {
      document.removeEventListener("keydown", onKey);
      document.removeEventListener("click", onClick);
    };
  }, [ref]);
}

/** The spec's bulk menu: it hides 2 seconds after the mouse leaves it, never while focus is inside it. */
export const HIDE_AFTER_MS = 2000;
export function useHideOnLeave(ref: RefObject<HTMLDetailsElement | null>, delayMs = HIDE_AFTER_MS) {
  const timer = useRef<ReturnType<typeof setTimeout>>();
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const cancel = () => clearTimeout(timer.current);
    const leave = () => {
      cancel();
      timer.current = setTimeout(() => {
        if (!el.contains(document.activeElement)) el.open = false;
      }, delayMs);
    };
    el.addEventListener("mouseleave", leave);
    el.addEventListener("mouseenter", cancel);
    return () => {
      cancel();
      el.removeEventListener("mouseleave", leave);
      el.removeEventListener("mouseenter", cancel);
    };
  }, [ref, delayMs]);
}
