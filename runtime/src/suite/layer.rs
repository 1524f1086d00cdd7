//! Nested configs: a `proposal-eval.toml` in a subfolder of a suite applies to the cases below
//! it, over the suite's (key by key, tables merged, a list replacing the list). A layer is the
//! config of the cases of one folder that has a config file, the suite's own folder included,
//! with what belongs to it: the suite-wide sources its `[recording] sources` name.

use crate::recording::sources::{Source, SourceError};
use crate::suite::config::{ConfigError, SuiteConfig};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// The config that applies to the cases of a folder.
pub(crate) struct Layer {
    pub config: Result<SuiteConfig, ConfigError>,
    /// The TOML texts the config was merged from, outermost first, for a file nested below;
    /// `None` for a config built in Rust (`Harness::with_config`), which no file can be merged
    /// over.
    texts: Option<Vec<String>>,
    /// The config file read last: where `[recording] sources` are written, for messages.
    pub file: PathBuf,
    /// The `[recording] sources` files, hashed once per process.
    pub sources: OnceLock<Result<Vec<Source>, SourceError>>,
}

impl Layer {
    /// The suite's own config: from `file` (which may not exist: the default).
    pub fn suite(file: PathBuf) -> Layer {
        let config = if file.exists() {
            SuiteConfig::load(&file)
        } else {
            Ok(SuiteConfig::default())
        };
        let texts = match &config {
            Ok(_) => SuiteConfig::text_of(&file).ok().map(|text| vec![text]),
            Err(_) => None,
        };
        Layer::new(config, texts, file)
    }

    /// A config built in Rust; `file` is the config file the suite would otherwise read.
    pub fn built(config: SuiteConfig, file: PathBuf) -> Layer {
        Layer::new(Ok(config), None, file)
    }

    fn new(
        config: Result<SuiteConfig, ConfigError>,
        texts: Option<Vec<String>>,
        file: PathBuf,
    ) -> Layer {
        Layer {
            config,
            texts,
            file,
            sources: OnceLock::new(),
        }
    }

    /// The config of the cases below `file`, a nested config over this one. `shown` is how
    /// `file` is named in messages.
    fn nested(&self, file: &Path, shown: &Path) -> Layer {
        let failed = |message: String| ConfigError {
            file: shown.to_path_buf(),
            line: 0,
            column: 0,
            message,
        };
        let config = match (&self.config, &self.texts) {
            // A case below a config that does not read fails with that config's error.
            (Err(e), _) => Err(e.clone()),
            (Ok(_), None) => Err(failed(
                "the suite's config is built in Rust (`Harness::with_config`), so this nested config cannot be merged over it: put its settings in the Rust config, or give the harness no built config".into(),
            )),
            (Ok(_), Some(under)) => match std::fs::read_to_string(file) {
                Err(e) => Err(failed(format!("cannot read the config file: {e}"))),
                Ok(text) => SuiteConfig::merged_over(under, &text, shown),
            }
            .map(|(config, merged)| (config, Some(merged))),
        };
        match config {
            Ok((config, texts)) => Layer::new(Ok(config), texts, file.to_path_buf()),
            Err(e) => Layer::new(Err(e), None, file.to_path_buf()),
        }
    }
}

/// The layers of a suite: its own, and those of its folders with a nested config, found and
/// read the first time a case below them asks.
pub(crate) struct Layers {
    suite: Arc<Layer>,
    /// Folder (relative to the suite, `/`-separated) to its layer, `None` when it holds no
    /// config file.
    folders: Mutex<HashMap<String, Option<Arc<Layer>>>>,
}

impl Layers {
    pub fn new(suite: Layer) -> Layers {
        Layers {
            suite: Arc::new(suite),
            folders: Mutex::default(),
        }
    }

    /// The suite's own layer.
    pub fn suite(&self) -> &Arc<Layer> {
        &self.suite
    }

    /// The layer of the case at `relative` (relative to the suite folder `dir`): the suite's,
    /// with each nested config between the suite and the case merged over it, outermost first.
    /// `shown` names a config file in messages (crate-relative).
    pub fn of(&self, dir: &Path, relative: &str, shown: impl Fn(&Path) -> PathBuf) -> Arc<Layer> {
        let mut layer = self.suite.clone();
        if !relative.contains('/') {
            return layer;
        }
        let mut folders = self.folders.lock().unwrap_or_else(|p| p.into_inner());
        let mut end = 0;
        while let Some(slash) = relative[end..].find('/') {
            end += slash;
            let folder = &relative[..end];
            let found = match folders.get(folder) {
                Some(found) => found.clone(),
                None => {
                    let file = dir.join(folder).join(crate::naming::CONFIG_FILE);
                    let found = file
                        .is_file()
                        .then(|| Arc::new(layer.nested(&file, &shown(&file))));
                    folders.insert(folder.to_string(), found.clone());
                    found
                }
            };
            if let Some(found) = found {
                layer = found;
            }
            end += 1;
        }
        layer
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proposal_eval_engine::compare::Matching;

    fn write(dir: &Path, relative: &str, text: &str) {
        let path = dir.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn shown(file: &Path) -> PathBuf {
        PathBuf::from(file.file_name().unwrap())
    }

    #[test]
    fn each_folder_gets_the_configs_on_its_way_merged_outermost_first() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        write(
            dir,
            "proposal-eval.toml",
            "[strict]\nmatching = \"any_order\"\n",
        );
        write(
            dir,
            "a/proposal-eval.toml",
            "[recording]\nvalidation = \"skip\"\n",
        );
        write(
            dir,
            "a/b/c/proposal-eval.toml",
            "[strict]\nmatching = \"ordered\"\n",
        );
        let layers = Layers::new(Layer::suite(dir.join("proposal-eval.toml")));
        let config = |relative: &str| layers.of(dir, relative, shown).config.clone().unwrap();
        assert_eq!(config("x.json").strict.matching, Matching::AnyOrder);
        assert_eq!(config("b/x.json").strict.matching, Matching::AnyOrder);
        let a = config("a/x.json");
        assert_eq!(
            (a.strict.matching, a.recording.validation),
            (Matching::AnyOrder, crate::recording::Validation::Skip)
        );
        let deep = config("a/b/c/d/x.json");
        assert_eq!(
            (deep.strict.matching, deep.recording.validation),
            (Matching::Ordered, crate::recording::Validation::Skip)
        );
        // One layer per folder with a config, shared by its cases.
        assert!(Arc::ptr_eq(
            &layers.of(dir, "a/b/c/x.json", shown),
            &layers.of(dir, "a/b/c/d/y.json", shown)
        ));
        assert!(Arc::ptr_eq(
            &layers.of(dir, "b/x.json", shown),
            layers.suite()
        ));
    }

    #[test]
    fn below_a_config_that_does_not_read_or_one_built_in_rust_a_nested_file_fails() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        write(dir, "proposal-eval.toml", "evaluatorz = []\n");
        write(dir, "a/proposal-eval.toml", "");
        let layers = Layers::new(Layer::suite(dir.join("proposal-eval.toml")));
        let suite_error = layers.suite().config.clone().unwrap_err();
        let nested = layers.of(dir, "a/x.json", shown);
        assert_eq!(nested.config.clone().unwrap_err(), suite_error);

        let layers = Layers::new(Layer::built(
            SuiteConfig::default(),
            dir.join("proposal-eval.toml"),
        ));
        assert!(layers.of(dir, "x.json", shown).config.is_ok());
        let err = layers
            .of(dir, "a/x.json", shown)
            .config
            .clone()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "proposal-eval.toml: the suite's config is built in Rust (`Harness::with_config`), so this nested config cannot be merged over it: put its settings in the Rust config, or give the harness no built config"
        );
    }
}
