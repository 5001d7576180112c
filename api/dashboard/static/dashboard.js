// Copy buttons: <button data-copy="ELEMENT_ID"> copies that element's value or text.
// Everything else in the dashboard works without JavaScript.
document.addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-copy]");
  if (!button) return;
  const source = document.getElementById(button.dataset.copy);
  const text = source.value !== undefined ? source.value : source.textContent;
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = "Copied";
  } catch {
    // No clipboard access (plain http, old browser): select it for Ctrl+C.
    if (source.select) source.select();
    button.textContent = "Press Ctrl+C";
  }
});
