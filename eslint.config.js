// ESLint: typescript-eslint, the rules of hooks and jsx-a11y. Formatting is Prettier's job, not the linter's.
import js from "@eslint/js";
import jsxA11y from "eslint-plugin-jsx-a11y";
import reactHooks from "eslint-plugin-react-hooks";
import globals from "globals";
import tseslint from "typescript-eslint";
import renderPurity from "./eslint-rules/render-purity.js";

export default tseslint.config(
  { ignores: ["build/", "node_modules/", "data/", "reports/", "tests/.tmp/", "bench/.cache/", "public/"] },
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
