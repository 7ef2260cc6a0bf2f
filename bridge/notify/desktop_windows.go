//go:build windows

package notify

import "context"

// toastAppID is the AppUserModelID the toasts are shown under: Windows
// PowerShell's, which every Windows (10 and later) knows without an
// installation step. A toast needs an AppUserModelID registered with a
// Start menu shortcut; under an id Windows does not know (such as
// "hubgate"), Show succeeds and the toast silently never appears. hubgate
// installs no shortcut, so it borrows PowerShell's: the toast then reads
// "Windows PowerShell" as its source, and its summary names hubgate.
const toastAppID = `{1AC14E77-02E7-4E5D-B744-2EB1AE5198B7}\WindowsPowerShell\v1.0\powershell.exe`

// toastScript shows a toast with the WinRT notification API; the texts
// come from environment variables (never spliced into the script).
const toastScript = `$ErrorActionPreference = 'Stop'
[Windows.UI.Notifications.ToastNotificationManager, Windows.UI.Notifications, ContentType = WindowsRuntime] | Out-Null
[Windows.Data.Xml.Dom.XmlDocument, Windows.Data.Xml.Dom.XmlDocument, ContentType = WindowsRuntime] | Out-Null
$template = [Windows.UI.Notifications.ToastNotificationManager]::GetTemplateContent([Windows.UI.Notifications.ToastTemplateType]::ToastText02)
$texts = $template.GetElementsByTagName('text')
$texts.Item(0).AppendChild($template.CreateTextNode($env:HUBGATE_NOTIFY_SUMMARY)) | Out-Null
$texts.Item(1).AppendChild($template.CreateTextNode($env:HUBGATE_NOTIFY_BODY)) | Out-Null
$toast = [Windows.UI.Notifications.ToastNotification]::new($template)
[Windows.UI.Notifications.ToastNotificationManager]::CreateToastNotifier('` + toastAppID + `').Show($toast)
`

// Toast shows notifications as Windows toasts through PowerShell.
type Toast struct{}

// DefaultDesktop is the platform's notification backend.
func DefaultDesktop() Desktop { return Toast{} }

// Notify runs PowerShell with the toast script on stdin.
func (Toast) Notify(ctx context.Context, m Message) error {
	return runChild(ctx, []string{"powershell.exe", "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-Command", "-"},
		toastScript, "HUBGATE_NOTIFY_SUMMARY="+m.Summary, "HUBGATE_NOTIFY_BODY="+m.Body)
}
