//! Control planes started at the same moment (as concurrently running test binaries do)
//! get their own ports and directories, and stopping one cleans up after it.

use kubebuilder_envtest::ControlPlane;
use kubebuilder_envtest::assets::KUBERNETES_VERSION;

#[test]
fn two_control_planes_start_side_by_side_and_clean_up() {
    let planes: Vec<ControlPlane> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..2).map(|_| scope.spawn(ControlPlane::start)).collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap().unwrap())
            .collect()
    });
    assert_ne!(planes[0].url(), planes[1].url());

    let runtime = tokio::runtime::Runtime::new().unwrap();
    for plane in &planes {
        runtime.block_on(async {
            let version = plane
                .client()
                .await
                .unwrap()
                .apiserver_version()
                .await
                .unwrap();
            assert_eq!(version.git_version, KUBERNETES_VERSION);
        });
    }

    let dirs: Vec<_> = planes.iter().map(|p| p.work_dir().to_path_buf()).collect();
    for plane in planes {
        plane.stop();
    }
    for dir in dirs {
        assert!(!dir.exists(), "{} was not removed", dir.display());
    }
}
