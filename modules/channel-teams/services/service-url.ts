/**
 * Which connectors replies may go to. An activity names its serviceUrl, and a reply is a POST there carrying the
 * bot's token: were any host taken, whoever got an activity signed could send the token (and the service's requests)
 * anywhere. So only the Bot Framework's own hosts over https (Teams' regional *.trafficmanager.net connectors and
 * *.botframework.com), plus the one origin the operator configured (an emulator, a test connector).
 */

const ALLOWED_SUFFIXES = ['.botframework.com', '.trafficmanager.net'];

/** Why `serviceUrl` may not be answered, or undefined when it may. `extra` is `service_url_allow`. */
export function serviceUrlProblem(serviceUrl: string, extra: string | undefined): string | undefined {
  let url: URL;
  try {
    url = new URL(serviceUrl);
  } catch {
    return 'serviceUrl is not a URL';
  }
  if (url.username || url.password) return 'serviceUrl carries credentials';
  if (extra && url.origin === new URL(extra).origin) return undefined;
  if (url.protocol !== 'https:') return `serviceUrl ${url.origin} is not https`;
  if (ALLOWED_SUFFIXES.some((suffix) => url.hostname.endsWith(suffix))) return undefined;
  return `serviceUrl host ${url.hostname} is not a Bot Framework connector (*.botframework.com, *.trafficmanager.net) nor service_url_allow`;
}

/** The connector URL of a path under serviceUrl (which ends with a path such as /amer/ that must be kept). */
export function connectorUrl(serviceUrl: string, path: string): string {
  const base = serviceUrl.endsWith('/') ? serviceUrl : `${serviceUrl}/`;
  return new URL(path, base).toString();
}
