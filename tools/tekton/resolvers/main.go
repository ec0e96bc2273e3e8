// Command resolvers runs Tekton's remote resolvers (cluster, git, hub, bundles,
// http) from the pinned module, as the upstream resolvers Deployment does, for
// the local cluster's process-per-component layout.
//
// Two changes from upstream's cmd/resolvers: knative's shared main always
// serves health probes on port 8080, which the Tekton controller already holds
// on this host, and exits when it cannot listen there; no kubelet probes a
// process here, so the probes are switched off. And -disable-ha, which the
// Tekton controller's main has, so one replica runs without leader leases as
// the controller does here. Everything the resolvers do is the upstream code's.
package main

import (
	"flag"
	"os"
	"strings"

	"github.com/tektoncd/pipeline/pkg/apis/resolution/v1alpha1"
	"github.com/tektoncd/pipeline/pkg/remoteresolution/resolver/bundle"
	"github.com/tektoncd/pipeline/pkg/remoteresolution/resolver/cluster"
	"github.com/tektoncd/pipeline/pkg/remoteresolution/resolver/framework"
	"github.com/tektoncd/pipeline/pkg/remoteresolution/resolver/git"
	"github.com/tektoncd/pipeline/pkg/remoteresolution/resolver/http"
	"github.com/tektoncd/pipeline/pkg/remoteresolution/resolver/hub"
	hubresolution "github.com/tektoncd/pipeline/pkg/resolution/resolver/hub"
	"k8s.io/client-go/rest"
	filteredinformerfactory "knative.dev/pkg/client/injection/kube/informers/factory/filtered"
	"knative.dev/pkg/controller"
	"knative.dev/pkg/injection"
	"knative.dev/pkg/injection/sharedmain"
	"knative.dev/pkg/signals"
)

func main() {
	flag.IntVar(&controller.DefaultThreadsPerController, "threads-per-controller", controller.DefaultThreadsPerController, "Threads (goroutines) to create per controller")
	// As sharedmain.MainWithContext offers it (the Tekton controller's main): one replica needs no leases.
	disableHA := flag.Bool("disable-ha", false, "Whether to disable high-availability functionality for this component.")

	ctx := filteredinformerfactory.WithSelectors(signals.NewContext(), v1alpha1.ManagedByLabelKey)
	ctx = sharedmain.WithHealthProbesDisabled(ctx)
	tektonHub := strings.TrimSuffix(os.Getenv("TEKTON_HUB_API"), "/")
	artifactHub := strings.TrimSuffix(hubresolution.DefaultArtifactHubURL, "/")
	if url := os.Getenv("ARTIFACT_HUB_API"); url != "" {
		artifactHub = strings.TrimSuffix(url, "/")
	}

	cfg := injection.ParseAndGetRESTConfigOrDie()
	if *disableHA {
		ctx = sharedmain.WithHADisabled(ctx)
	}
	// Upstream's budget: twice client-go's default QPS, shared by five controllers.
	if cfg.QPS == 0 {
		cfg.QPS = 2 * rest.DefaultQPS
	}
	if cfg.Burst == 0 {
		cfg.Burst = rest.DefaultBurst
	}
	cfg.QPS *= 5
	cfg.Burst *= 5

	sharedmain.MainWithConfig(ctx, "controller", cfg,
		framework.NewController(ctx, &git.Resolver{}),
		framework.NewController(ctx, &hub.Resolver{TektonHubURL: tektonHub, ArtifactHubURL: artifactHub}),
		framework.NewController(ctx, &bundle.Resolver{}),
		framework.NewController(ctx, &cluster.Resolver{}),
		framework.NewController(ctx, &http.Resolver{}))
}
