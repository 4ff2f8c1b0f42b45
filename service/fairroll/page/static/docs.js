// The API docs page (/schema): Redoc, served by fairroll, reading the published spec.
const container = document.getElementById("redoc");
globalThis.Redoc.init(container.dataset.specUrl, { hideDownloadButton: false }, container);
