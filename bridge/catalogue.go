package bridge

import (
	"crypto/sha256"
	"encoding/json"
	"slices"

	"github.com/hubgate/hubgate/deviceapi"
)

// FromRESTDevice names the REST device record (GET
// /api/Device/userDevices/{id}, read when pairing) as the source of the
// macro catalogue (Options.Device, EventCatalogue's From). The hub's
// records are named by the hub method that carried them: "VerifySelf",
// "GetLatestDevice" (hub.KindDeviceRecord) and "DeviceProfileUpdate".
const FromRESTDevice = "the REST device"

// CatalogueOf is the macro list a device record gives the catalogue, and
// whether it gives one. Only a current profile whose
// configuration.macros is a list (an empty one too: the person's profile
// has no macros) gives one; a record without a profile, with a null one,
// or with a profile, configuration or macro list of an unexpected shape
// (kept as it came, deviceapi.Oddity) says nothing about the macros, and
// the catalogue stays as it was: the real service's GetLatestDevice answer
// has no documented shape, and an odd record never costs the macros of
// the last good one. Why says what was missing when ok is false.
func CatalogueOf(d *deviceapi.UserDevice) (macros []deviceapi.Macro, ok bool, why string) {
	switch {
	case d == nil:
		return nil, false, "no device"
	case d.CurrentProfile == nil:
		return nil, false, "no current profile (absent, null or not an object)"
	case d.CurrentProfile.Configuration.Macros == nil:
		return nil, false, "the profile has no macro list (absent, null or not a list)"
	}
	return d.CurrentProfile.Configuration.Macros, true, ""
}

// takeDevice is the one way the macro catalogue changes: it takes the
// catalogue of a device record the service sent (from: FromRESTDevice,
// "VerifySelf", "GetLatestDevice", "DeviceProfileUpdate"). A record that
// gives no macro list (CatalogueOf) keeps the catalogue; one whose macros
// are those of the catalogue already (every reconnect's VerifySelf,
// typically) changes nothing either. A record of another device than the
// catalogue's (a reconnect after a new pairing) that gives none empties
// it: another device's macros never route. Only a change is logged at
// info level and published (EventCatalogue, saying where it came from),
// with the profile's ambiguities as warnings.
func (b *Bridge) takeDevice(d *deviceapi.UserDevice, from string) {
	macros, ok, why := CatalogueOf(d)
	b.mu.Lock()
	otherDevice := d != nil && d.ID != "" && b.catDevice != "" && d.ID != b.catDevice
	b.mu.Unlock()
	if !ok && !otherDevice {
		b.log.Debug("device record without a macro list; the macro catalogue stays", "from", from, "why", why)
		return
	}
	sum := catalogueSum(macros)
	b.mu.Lock()
	if d.ID != "" {
		b.catDevice = d.ID
	}
	// A profile was read: the next one over the limit is another
	// profile, told again (profileTooLarge), a reconnect's too.
	b.toldProfileSize = 0
	if sum == b.catSum {
		b.mu.Unlock()
		b.log.Debug("macro catalogue unchanged", "from", from, "macros", len(macros))
		return
	}
	b.catSum = sum
	b.set = b.opts.Rules.WithCatalog(slices.Clone(macros))
	cat := b.set.Catalog()
	b.mu.Unlock()
	profile, profileID := "", ""
	if p := d.CurrentProfile; p != nil {
		profile, profileID = p.Name, p.ID
	}
	b.log.Info("macro catalogue replaced", "from", from, "device", d.ID, "profile_id", profileID, "profile", profile,
		"macros", cat.Len(), "odd_macros", len(macros)-cat.Len())
	warnAmbiguities(b.log, cat)
	b.emit(Event{Kind: EventCatalogue, From: from, Profile: profile, Macros: cat.Len(), OddMacros: len(macros) - cat.Len()})
}

// catalogueSum tells macro lists apart: the sum of their JSON as they
// came (deviceapi keeps it).
func catalogueSum(macros []deviceapi.Macro) [sha256.Size]byte {
	raw, _ := json.Marshal(macros) // cannot fail for decoded values
	return sha256.Sum256(raw)
}
