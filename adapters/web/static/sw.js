// strikebot's service worker: shows the campaign's push messages as notifications, and
// opens the update's page when one is clicked. The payload is JSON made by the webpush
// plugin, already in the language the person chose on the page.
self.addEventListener("push", (event) => {
  let data = {};
  try {
    data = event.data ? event.data.json() : {};
  } catch (e) {
    data = { title: event.data ? event.data.text() : "" };
  }
  const title = data.title || data.sender || "";
  event.waitUntil(
    self.registration.showNotification(title, {
      body: data.body || "",
      lang: data.lang || "",
      tag: data.tag || "",
      data: { url: data.url || "/" },
    })
  );
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const url = (event.notification.data && event.notification.data.url) || "/";
  event.waitUntil(self.clients.openWindow(url));
});
