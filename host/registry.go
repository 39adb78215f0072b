package host

import (
	"fmt"

	"github.com/nvim-acp/nvim-acp/registry"
)

// registryService is the registry over RPC (registry.Service, whose file
// has the contract with Lua), its results sent as UI events.
func (h *Host) registryService() *registry.Service {
	r := &registry.Service{
		OnList: func(request int, list map[string]any, err error) {
			h.ui.Emit(registryListEvent(request, list, err))
		},
		OnProgress: func(install int, id, phase string, bytes, total int64) {
			h.ui.Emit(registryProgressEvent(install, id, phase, bytes, total))
		},
		OnInstalled: func(install int, id string, spec map[string]any, err error) {
			h.ui.Emit(registryInstalledEvent(install, id, spec, err))
		},
		Log: h.log,
	}
	if h.nv != nil {
		r.Stdpath = func(what string) (string, error) {
			var p string
			err := h.nv.Call("stdpath", &p, what)
			return p, err
		}
	}
	return r
}

// registryMethods are the acp_registry_* RPC methods of r.
func registryMethods(r *registry.Service) map[string]any {
	return map[string]any{
		"acp_registry_list":    r.List,
		"acp_registry_refresh": r.Refresh,
		"acp_registry_install": r.Install,
		"acp_registry_cancel":  r.Cancel,
		"acp_registry_resolve": r.Resolve,
	}
}

// registerRegistry installs the acp_registry_* methods (registry.Service).
func (h *Host) registerRegistry() error {
	for name, fn := range registryMethods(h.registryService()) {
		if err := h.nv.RegisterHandler(name, fn); err != nil {
			return fmt.Errorf("register %s: %w", name, err)
		}
	}
	return nil
}
