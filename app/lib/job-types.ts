/** Job types the job page tells apart (shared by the server that queues them and the page that shows them). */
export const REIMPORT_JOB = "project.reimport";
export const IMPORT_JOB = "attributes.import";
