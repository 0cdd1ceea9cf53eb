import { getFormProps, type SubmissionResult } from "@conform-to/react";
import { parseWithZod } from "@conform-to/zod";
import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData } from "@remix-run/react";
import { useEffect, useRef, useState } from "react";
import { ErrorSummary, Field, SubmitButton, TextareaField, usePending, useSchemaForm } from "~/components/forms";
import { Logo } from "~/components/logo";
import { PersonFields, type ChoiceOptions } from "~/components/person-fields";
import { formatMobile, REGISTRATION_FIELDS, REGISTRATION_LIMITS, RegistrationSchema, type RegistrationInput } from "~/lib/account-schemas";
import { NotFoundError, TooManyRequestsError } from "~/lib/errors";
import { page, readForm } from "~/web/http.server";
import { choiceOptions } from "~/models/reference.server";
import { register } from "~/services/accounts.server";
import { getUser, requestMeta } from "~/sessions.server";

export const meta: MetaFunction = () => [{ title: "Register | Koala" }];

const SUCCESS = "Your application has been submitted successfully.";
type Values = Partial<Record<(typeof REGISTRATION_FIELDS)[number], string>>;

/**
 * Registration (spec 2): the form, a confirm step (a dialog with JavaScript, a page of its own without), then the
 * success view, which /pending/submitted opens directly. Public; a signed-in person goes to the dashboard.
 */
export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) => {
  if (params.submitted !== undefined && params.submitted !== "submitted") throw new NotFoundError("Page not found");
  if (await getUser(request, context)) throw redirect("/dashboard");
  // A company sign-in that sends new people here fills in what the provider said (name, surname, address).
  const url = new URL(request.url);
  const prefill = Object.fromEntries(
    (["name", "surname", "email"] as const).map((f) => [f, (url.searchParams.get(f) ?? "").slice(0, REGISTRATION_LIMITS[f])]),
  );
  return { submitted: params.submitted === "submitted", options: await choiceOptions(), prefill };
});

export const action = page(async ({ request, context, params }: ActionFunctionArgs) => {
  if (params.submitted !== undefined) throw new NotFoundError("Page not found");
  const form = await readForm(request);
  const submission = parseWithZod(form, { schema: RegistrationSchema });
  const values = Object.fromEntries(REGISTRATION_FIELDS.map((f) => [f, String(form.get(f) ?? "").slice(0, 300)])) as Values;
  if (submission.status !== "success") return data({ step: "form" as const, result: submission.reply(), values }, { status: 400 });
  const { intent, website, ...input } = submission.value;
  // A filled honeypot is a robot, at whichever step: it is told what a person is told, and nothing is stored or sent.
  if (website) throw redirect("/pending/submitted");
  if (intent === "edit") return { step: "form" as const, result: null, values };
  if (intent === "review") return { step: "confirm" as const, result: null, values };
  let stored: boolean;
  try {
    stored = await register(input as RegistrationInput, requestMeta(request, context));
  } catch (err) {
    // Too many applications from this address: said above the form, with everything as it was typed.
    if (!(err instanceof TooManyRequestsError)) throw err;
    return data(
      { step: "form" as const, result: submission.reply({ formErrors: [err.message] }), values },
      { status: err.status, headers: err.headers },
    );
  }
  if (!stored)
    return data(
      { step: "form" as const, result: submission.reply({ formErrors: ["Please choose from the lists."] }), values },
      { status: 400 },
    );
  throw redirect("/pending/submitted");
});

export default function Pending() {
  const { submitted, options, prefill } = useLoaderData<typeof loader>();
  const answer = useActionData<typeof action>();
  return (
    <div className="login-page">
      <main className="login-card register-card" aria-labelledby="register-title">
        <Logo />
        {submitted ? (
          <Submitted />
        ) : answer?.step === "confirm" ? (
          <ConfirmPage values={answer.values} options={options} />
        ) : (
          <RegistrationForm options={options} lastResult={answer?.result} values={answer?.values ?? (prefill as Values)} />
        )}
      </main>
    </div>
  );
}

function Submitted() {
  return (
    <div role="status" className="register-done">
      <h1 id="register-title">Registration</h1>
      <p>{SUCCESS}</p>
      <Link to="/login" className="btn btn-primary">
        BACK
      </Link>
    </div>
  );
}

function RegistrationForm({
  options,
  lastResult,
  values,
}: {
  options: ChoiceOptions;
  lastResult?: SubmissionResult<string[]> | null;
  values?: Values;
}) {
  const pending = usePending();
  const [review, setReview] = useState<Values | null>(null);
  const [form, fields] = useSchemaForm(RegistrationSchema, {
    id: "registration",
    lastResult,
    defaultValue: values,
    shouldValidate: "onSubmit",
    onValidSubmit(event, value) {
      // With JavaScript the confirm step is a dialog over the form; Confirm in it sends the form for real.
      if (value.intent !== "review") return;
      event.preventDefault();
      setReview(Object.fromEntries(REGISTRATION_FIELDS.map((f) => [f, value[f] ?? ""])) as Values);
    },
  });
  return (
    <>
      <h1 id="register-title">Registration</h1>
      <p className="muted">
        Apply for a Koala account. An administrator reviews every application. Already have an account? <Link to="/login">Sign in</Link>
      </p>
      <Form method="post" action="/pending" {...getFormProps(form)} className="register-form">
        <ErrorSummary
          form={form}
          lastResult={lastResult}
          fields={[
            fields.name,
            fields.surname,
            fields.country_code,
            fields.mobile,
            fields.country,
            fields.timezone,
            fields.language,
            fields.org_unit,
            fields.email,
            fields.client,
            fields.sim_use,
          ]}
        />
        <PersonFields fields={fields} options={options} dialCode={fields.country_code} />
        <Field
          label="Email"
          field={fields.email}
          type="email"
          inputProps={{ maxLength: REGISTRATION_LIMITS.email, autoComplete: "email" }}
        />
        <Field
          label="Projects"
          field={fields.client}
          inputProps={{ maxLength: REGISTRATION_LIMITS.client }}
          hint="The names of the projects (clients) you work on, separated by commas"
        />
        <TextareaField
          label="What will you use the system for?"
          field={fields.sim_use}
          textareaProps={{ maxLength: REGISTRATION_LIMITS.sim_use, rows: 3 }}
        />
        <div className="honeypot" aria-hidden="true">
          <label htmlFor="registration-website">Leave this field empty</label>
          <input id="registration-website" name="website" type="text" tabIndex={-1} autoComplete="off" />
        </div>
        <SubmitButton pending={pending} pendingText="Submitting…" name="intent" value="review">
          Submit
        </SubmitButton>
      </Form>
      {review ? <ConfirmDialog values={review} options={options} onClose={() => setReview(null)} /> : null}
    </>
  );
}

/** The confirm step with JavaScript: a modal over the form; Confirm submits the form itself, Edit goes back to it. */
function ConfirmDialog({ values, options, onClose }: { values: Values; options: ChoiceOptions; onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const pending = usePending();
  useEffect(() => {
    ref.current?.showModal();
  }, []);
  return (
    <dialog ref={ref} className="confirm-dialog" aria-labelledby="confirm-title" onClose={onClose}>
      <h2 id="confirm-title">Confirm your application</h2>
      <Summary values={values} options={options} />
      <div className="form-actions">
        <SubmitButton pending={pending} pendingText="Sending…" form="registration" name="intent" value="confirm" formNoValidate>
          Confirm
        </SubmitButton>
        <button type="button" className="btn" onClick={() => ref.current?.close()}>
          Edit
        </button>
      </div>
    </dialog>
  );
}

/** The confirm step without JavaScript: the same summary on a page of its own, the values carried in hidden fields. */
function ConfirmPage({ values, options }: { values: Values; options: ChoiceOptions }) {
  return (
    <section aria-labelledby="register-title">
      <h1 id="register-title">Confirm your application</h1>
      <Summary values={values} options={options} />
      <Form method="post" action="/pending" className="form-actions">
        {REGISTRATION_FIELDS.map((f) => (
          <input key={f} type="hidden" name={f} value={values[f] ?? ""} />
        ))}
        <button type="submit" name="intent" value="confirm" className="btn btn-primary">
          Confirm
        </button>
        <button type="submit" name="intent" value="edit" className="btn">
          Edit
        </button>
      </Form>
    </section>
  );
}

function Summary({ values, options }: { values: Values; options: ChoiceOptions }) {
  const label = (list: { value: string; label: string }[], value?: string) => list.find((o) => o.value === value)?.label ?? value ?? "";
  const rows: [string, string][] = [
    ["Name", `${values.name ?? ""} ${values.surname ?? ""}`],
    ["Email", values.email ?? ""],
    ["Mobile", `${label(options.dialCodes, values.country_code)} ${formatMobile(values.mobile ?? "")}`],
    ["Country", label(options.countries, values.country)],
    ["Timezone", label(options.timezones, values.timezone)],
    ["Language", label(options.languages, values.language)],
    ["Org unit", values.org_unit ?? ""],
    ["Projects", values.client ?? ""],
    ["Use", values.sim_use ?? ""],
  ];
  return (
    <dl className="summary-list">
      {rows.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}
