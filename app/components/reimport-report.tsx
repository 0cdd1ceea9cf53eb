import type { ReimportReport } from "~/services/reimport.server";

const n = (v: number) => v.toLocaleString("en");

/** What a re-import did: counts, then the entries it could not take and why (the job page). */
export function ReimportReportView({ report }: { report: ReimportReport }) {
  if (report.failure)
    return (
      <p role="alert" className="form-error">
        {report.failure}
      </p>
    );
  const more = report.refused - report.problems.filter((p) => !p.where.startsWith("Attribute ")).length;
  return (
    <div className="import-report" aria-labelledby="reimport-report-heading">
      <h2 id="reimport-report-heading">Re-import finished</h2>
      <p role="status">
        {report.kind === "wsc"
          ? `${n(report.added)} images added, ${n(report.updated)} updated, ${n(report.unchanged)} unchanged, ${n(report.refused)} not taken.`
          : `${n(report.updated + report.unchanged)} images made again from their originals (${n(report.updated)} with corrected file details), ${n(report.refused)} could not be.`}
      </p>
      {report.problems.length ? (
        <ul>
          {report.problems.map((p, i) => (
            <li key={i}>
              {p.where}: {p.message}
            </li>
          ))}
        </ul>
      ) : null}
      {more > 0 ? <p>… and {n(more)} more.</p> : null}
    </div>
  );
}
