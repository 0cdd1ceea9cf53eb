// ESLint: typescript-eslint, the rules of hooks and jsx-a11y. Formatting is Prettier's job, not the linter's.
import js from "@eslint/js";
import jsxA11y from "eslint-plugin-jsx-a11y";
import reactHooks from "eslint-plugin-react-hooks";
import globals from "globals";
import tseslint from "typescript-eslint";
import renderPurity from "./eslint-rules/render-purity.js";

/** Where each layer lives, as import paths (`~/` is app/; a relative path into another layer's folder counts too). */
const LAYER_PATHS = {
  lib: ["~/lib/*", "~/config.server", "**/lib/*"],
  db: ["~/db/*", "**/db/*"],
  models: ["~/models/*", "**/models/*"],
  services: ["~/services/*", "**/services/*"],
  web: ["~/web/*", "**/web/*"],
  routes: ["~/routes/*", "**/routes/*"],
  components: ["~/components/*", "**/components/*"],
  sessions: ["~/sessions.server", "../sessions.server", "../../sessions.server", "../../../sessions.server"],
  "server-modules": ["**/*.server", "**/*.server.ts"],
};

/** A no-restricted-imports rule per layer: the layers above it, by path; types may still be imported. */
function layerRules(layers) {
  return layers.map(({ files, above }) => ({
    files,
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        {
          patterns: above.map((layer) => ({
            group: LAYER_PATHS[layer],
            allowTypeImports: true,
            message: `Imports run down the layers (docs/architecture.md): this file may not import from ${layer}.`,
          })),
        },
      ],
    },
  }));
}

export default tseslint.config(
  { ignores: ["build/", "node_modules/", "data/", "reports/", "tests/.tmp/", "bench/.cache/", "public/", "tests/client/koala-api.d.ts"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  jsxA11y.flatConfigs.recommended,
  {
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
    plugins: { "react-hooks": reactHooks },
    rules: {
      "react-hooks/rules-of-hooks": "error",
      "react-hooks/exhaustive-deps": "error",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_" },
      ],
      "@typescript-eslint/no-explicit-any": "off",
      "no-console": "error",
      // Single-purpose pages (a typed confirmation, an MFA code) put focus where the person is going.
      "jsx-a11y/no-autofocus": "off",
    },
  },
  // The layers (docs/architecture.md, "Layers"): lib (leaves) → db → models → services → web → routes and
  // components. A layer imports only from those below it; type-only imports are free (they vanish from the build).
  // tests/unit/architecture.test.ts checks the whole graph too: no import circle, nothing running back up.
  ...layerRules([
    { files: ["app/lib/**", "app/config.server.ts"], above: ["db", "models", "services", "web", "routes", "components", "sessions"] },
    { files: ["app/db/**"], above: ["models", "services", "web", "routes", "components", "sessions"] },
    { files: ["app/db/migrations/**"], above: ["lib", "models", "services", "web", "routes", "components", "sessions"] },
    { files: ["app/models/**"], above: ["services", "web", "routes", "components", "sessions"] },
    { files: ["app/services/**"], above: ["web", "routes", "components", "sessions"] },
    { files: ["app/web/**", "app/sessions.server.ts"], above: ["routes", "components"] },
    // Components are sent to the browser: no server module at all (models, services, web and db are all *.server).
    { files: ["app/components/**"], above: ["routes", "server-modules"] },
  ]),
  {
    // Renders are pure (eslint-rules/render-purity.js): components and route modules, not their server halves.
    files: ["app/components/**/*.tsx", "app/routes/**/*.tsx", "app/root.tsx"],
    plugins: { koala: renderPurity },
    rules: { "koala/no-impure-render": "error" },
  },
  {
    // Scripts, the CLI, benchmarks and tests write to the terminal on purpose.
    files: ["scripts/**", "cli/**", "bench/**", "tests/**"],
    rules: { "no-console": "off" },
  },
);
