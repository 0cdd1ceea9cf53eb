// Renders must be pure (docs/architecture.md, "Renders are pure"; decision 0018): a page's HTML may depend on its URL
// and its loaders' data only, since two caches answer repeat views with an earlier render. This rule reports what
// would break that in render code: reading the clock (`Date.now()`, `new Date()` with no argument,
// `performance.now()`), `Math.random()` / `crypto.randomUUID()`, and module-level `let`/`var` state in a component
// file. Render code is a component's body (a function named with a capital letter, or a route's default export) and
// whatever it calls while rendering (`.map` callbacks, `useMemo`); code that runs later is not render code: effects,
// callbacks kept for later (`useCallback`, `setTimeout`, event listeners) and JSX `on…` handlers.

const LATER_HOOKS = new Set(["useEffect", "useLayoutEffect", "useInsertionEffect", "useCallback"]);
const LATER_CALLS = new Set(["setTimeout", "setInterval", "requestAnimationFrame", "queueMicrotask", "addEventListener"]);

const isComponent = (fn) => {
  const name =
    fn.id?.name ?? (fn.parent?.type === "VariableDeclarator" && fn.parent.id.type === "Identifier" ? fn.parent.id.name : undefined);
  if (name && /^[A-Z]/.test(name)) return true;
  return fn.parent?.type === "ExportDefaultDeclaration";
};

/** A function whose body runs after the render: an effect, a kept callback, an event handler. */
function runsLater(fn) {
  const parent = fn.parent;
  if (parent?.type === "CallExpression" && parent.arguments.includes(fn)) {
    const callee = parent.callee;
    const name = callee.type === "Identifier" ? callee.name : callee.type === "MemberExpression" ? callee.property.name : "";
    return LATER_HOOKS.has(name) || LATER_CALLS.has(name);
  }
  if (parent?.type === "JSXExpressionContainer" && parent.parent?.type === "JSXAttribute") return /^on[A-Z]/.test(parent.parent.name.name);
  // A handler named as one (`function onSubmit…`, `const handleClick = …`) runs when it is called, not while rendering.
  const name = fn.id?.name ?? (parent?.type === "VariableDeclarator" ? parent.id.name : undefined);
  return /^(on|handle)[A-Z]/.test(name ?? "");
}

function inRender(node) {
  for (let at = node.parent; at; at = at.parent) {
    if (at.type !== "FunctionDeclaration" && at.type !== "FunctionExpression" && at.type !== "ArrowFunctionExpression") continue;
    if (runsLater(at)) return false;
    if (isComponent(at)) return true;
  }
  return false;
}

const impure = (node) => {
  if (node.type === "NewExpression") return node.callee.type === "Identifier" && node.callee.name === "Date" && node.arguments.length === 0;
  const callee = node.callee;
  if (callee.type !== "MemberExpression" || callee.object.type !== "Identifier") return false;
  const call = `${callee.object.name}.${callee.property.name}`;
  return ["Date.now", "Math.random", "performance.now", "crypto.randomUUID", "crypto.getRandomValues"].includes(call);
};

export default {
  rules: {
    "no-impure-render": {
      meta: {
        type: "problem",
        docs: { description: "Renders are pure: no clock, no randomness, no module state in render code" },
        messages: {
          impure: "A render must not read the clock or anything random: pass the value in through a loader (renders are memoized).",
          moduleState:
            "Module-level `{{kind}}` in a component file is state shared by every render and every visitor; keep it in a loader or a hook.",
        },
        schema: [],
      },
      create(context) {
        const check = (node) => {
          if (impure(node) && inRender(node)) context.report({ node, messageId: "impure" });
        };
        return {
          CallExpression: check,
          NewExpression: check,
          "Program > VariableDeclaration"(node) {
            if (node.kind !== "const") context.report({ node, messageId: "moduleState", data: { kind: node.kind } });
          },
          "Program > ExportNamedDeclaration > VariableDeclaration"(node) {
            if (node.kind !== "const") context.report({ node, messageId: "moduleState", data: { kind: node.kind } });
          },
        };
      },
    },
  },
};
