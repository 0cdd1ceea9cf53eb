import { getFormProps, getInputProps } from "@conform-to/react";
import { parseWithZod } from "@conform-to/zod";
import { type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import {
  CancelLink,
  Field,
  FieldShell,
  FormError,
  IntentButton,
  SelectField,
  SubmitButton,
  usePending,
  useSchemaForm,
} from "~/components/forms";
import { domainList } from "~/config.server";
import { SsoProviderSchema } from "~/lib/account-schemas";
import { resultOf } from "~/lib/form-answer";
import { storedProvider } from "~/models/sso-providers.server";
import { adminActor } from "~/routes/_app+/admin+/admin.server";
import { deleteConsoleProvider, saveConsoleProvider } from "~/services/oidc.server";
import { page, readForm, redirectWithToast, refused } from "~/web/http.server";

export const meta: MetaFunction = () => [{ title: "Company sign-in provider | Koala" }];

/**
 * A company sign-in provider added in the console: new (`/admin/sign-in/providers/new`) or one to change or remove.
 * The secret field is always empty: a secret once saved is never sent back; left empty, the saved one stays.
 */
export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) => {
  const actor = await adminActor(request, context);
  if (params.id === "new") return { provider: null };
  const p = await storedProvider(actor, params.id ?? "");
  return {
    provider: {
      id: p.id,
      name: p.name,
      issuer: p.issuer,
      clientId: p.client_id,
      scopes: p.scopes,
      groupsClaim: p.groups_claim,
      domains: p.domains.split(",").join(", "),
      ssoOnly: p.sso_only === 1,
      newUsers: p.new_users,
      secretSet: p.secretSet,
    },
  };
});

export const action = page(async ({ request, params, context }: ActionFunctionArgs) => {
  const actor = await adminActor(request, context);
  const isNew = params.id === "new";
  if (!isNew) await storedProvider(actor, params.id ?? ""); // 404 for one that is not there (or from the environment)
  const form = await readForm(request);
  if (!isNew && form.get("intent") === "delete") {
    await deleteConsoleProvider(actor, params.id!);
    return redirectWithToast(request, "/admin/sign-in", { kind: "success", title: "Provider removed" });
  }
  // The id of a provider being changed is its address's, whatever the form says.
  if (!isNew) form.set("id", params.id!);
  const submission = parseWithZod(form, { schema: SsoProviderSchema });
  const hideFields = ["clientSecret"];
  if (submission.status !== "success") return refused("provider", submission.reply({ hideFields }));
  const v = submission.value;
  const problems = await saveConsoleProvider(
    actor,
    {
      id: v.id,
      name: v.name,
      issuer: v.issuer,
      clientId: v.clientId,
      clientSecret: v.clientSecret ?? "",
      scopes: v.scopes || "openid email profile",
      groupsClaim: v.groupsClaim || "groups",
      domains: domainList(v.domains),
      ssoOnly: v.ssoOnly ?? false,
      newUsers: v.newUsers,
    },
    isNew,
  );
  if (problems.length) {
    const fieldErrors: Record<string, string[]> = {};
    for (const p of problems) (fieldErrors[p.field] ??= []).push(p.message);
    return refused("provider", submission.reply({ fieldErrors, hideFields }));
  }
  return redirectWithToast(request, "/admin/sign-in", { kind: "success", title: isNew ? "Provider added" : "Provider saved" });
});

export default function ProviderPage() {
  const { provider } = useLoaderData<typeof loader>();
  const answer = useActionData<typeof action>();
  const pending = usePending();
  const [form, fields] = useSchemaForm(SsoProviderSchema, {
    id: "provider",
    lastResult: resultOf(answer, "provider"),
    defaultValue: provider ?? { scopes: "openid email profile", groupsClaim: "groups", newUsers: "create" },
  });
  return (
    <section aria-labelledby="provider-heading">
      <h2 id="provider-heading">{provider ? `Change ${provider.name}` : "Add a company sign-in provider"}</h2>
      <p>
        Register Koala at the provider first: its redirect URI is <code>{"<APP_URL>/auth/sso/<id>/callback"}</code> and its back-channel
        logout URI <code>{"<APP_URL>/auth/sso/<id>/backchannel-logout"}</code> (docs/sso.md).
      </p>
      <Form method="post" {...getFormProps(form)}>
        <FormError id={form.errorId} errors={form.errors} />
        {provider ? (
          <p>
            Id: <strong>{provider.id}</strong>
          </p>
        ) : (
          <Field label="Id" field={fields.id} hint="Lower-case letters or digits; part of the redirect URI." />
        )}
        <Field label="Name on the sign-in page" field={fields.name} />
        <Field label="Issuer URL" field={fields.issuer} type="url" />
        <Field label="Client id" field={fields.clientId} />
        <Field
          label="Client secret"
          field={fields.clientSecret}
          type="password"
          inputProps={{ autoComplete: "new-password" }}
          hint={provider?.secretSet ? "A secret is saved; leave this empty to keep it." : "Leave empty for a public client (PKCE only)."}
        />
        <Field label="Scopes" field={fields.scopes} />
        <Field label="Groups claim" field={fields.groupsClaim} />
        <Field label="E-mail domains" field={fields.domains} hint="Separated by commas, for example example.com, example.co.uk." />
        <FieldShell label="Only through this provider" field={fields.ssoOnly}>
          <input {...getInputProps(fields.ssoOnly, { type: "checkbox" })} />
        </FieldShell>
        <SelectField
          label="New people"
          field={fields.newUsers}
          options={[
            { value: "create", label: "Make the account on the first sign-in" },
            { value: "register", label: "Send them to the application form (an admin approves)" },
            { value: "refuse", label: "Refuse until an admin makes the account" },
          ]}
        />
        <SubmitButton pending={pending} pendingText="Saving…">
          {provider ? "Save provider" : "Add provider"}
        </SubmitButton>
        <CancelLink to="/admin/sign-in" />
      </Form>
      {provider ? (
        <IntentButton intent="delete" className="btn btn-danger">
          Remove {provider.name}
        </IntentButton>
      ) : null}
    </section>
  );
}
