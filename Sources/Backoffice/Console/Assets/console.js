// Enhancements only: every page works without this script.
// Times: a <time datetime="…"> written in UTC is shown in the reader's own time zone, with UTC on hover.
document.querySelectorAll("time[datetime]").forEach((element) => {
  const when = new Date(element.getAttribute("datetime"));
  if (Number.isNaN(when.getTime())) return;
  element.title = element.getAttribute("datetime");
  element.textContent = when.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
});
