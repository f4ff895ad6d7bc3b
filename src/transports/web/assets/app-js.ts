/**
 * The UI's only script, a progressive enhancement: every page works without it. Forms marked
 * `data-busy` say what the server is doing while a slow request (discovery, credential
 * validation) runs, and stop a second submission; `data-copy` buttons copy a one-time secret.
 */
export const appJs = `
document.addEventListener("submit", (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement) || !form.dataset.busy) return;
  if (form.classList.contains("busy")) { event.preventDefault(); return; }
  form.classList.add("busy");
  for (const button of form.querySelectorAll("button")) button.disabled = true;
  let status = form.querySelector(".progress");
  if (!status) {
    status = document.createElement("div");
    status.className = "progress";
    status.setAttribute("role", "status");
    status.innerHTML = "<progress></progress><span></span>";
    form.append(status);
  }
  status.querySelector("span").textContent = form.dataset.busy;
});
document.addEventListener("click", (event) => {
  const button = event.target instanceof Element ? event.target.closest("button[data-copy]") : null;
  if (!button) return;
  const target = document.getElementById(button.dataset.copy);
  if (!target || !navigator.clipboard) return;
  navigator.clipboard.writeText(target.textContent.trim()).then(() => { button.textContent = "Copied"; });
});
`;
